//! Timestamps at the start of a log line (and the bracketed date of the
//! Apache/nginx access log), turned into Unix seconds. Hand-written byte
//! scanners: this runs on every line, so no regular expression.

/// A timestamp found in a line: Unix seconds (UTC; a zone offset in the text
/// is applied) and the byte range it occupied.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Stamp {
    pub secs: i64,
    pub start: usize,
    pub end: usize,
    /// A host name follows (syslog): it is header, not message.
    pub host_follows: bool,
}

/// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's
/// algorithm).
pub fn days_from_civil(y: i64, m: u32, d: u32) -> i64 {
    let y = if m <= 2 { y - 1 } else { y };
    let era = if y >= 0 { y } else { y - 399 } / 400;
    let yoe = y - era * 400;
    let m = i64::from(m);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(d) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The civil date (year, month, day) of a day count since 1970-01-01.
pub fn civil_from_days(z: i64) -> (i64, u32, u32) {
    let z = z + 719_468;
    let era = if z >= 0 { z } else { z - 146_096 } / 146_097;
    let doe = z - era * 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let y = yoe + era * 400;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let m = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (if m <= 2 { y + 1 } else { y }, m, d)
}

/// `YYYY-MM-DDTHH:MM:SSZ` of Unix seconds.
pub fn format_utc(secs: i64) -> String {
    let days = secs.div_euclid(86_400);
    let rem = secs.rem_euclid(86_400);
    let (y, m, d) = civil_from_days(days);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem / 60 % 60,
        rem % 60
    )
}

fn digits(b: &[u8], at: usize, n: usize) -> Option<u32> {
    let s = b.get(at..at + n)?;
    let mut v = 0u32;
    for &c in s {
        if !c.is_ascii_digit() {
            return None;
        }
        v = v * 10 + u32::from(c - b'0');
    }
    Some(v)
}

const MONTHS: [&[u8; 3]; 12] = [
    b"Jan", b"Feb", b"Mar", b"Apr", b"May", b"Jun", b"Jul", b"Aug", b"Sep", b"Oct", b"Nov", b"Dec",
];

fn month(b: &[u8], at: usize) -> Option<u32> {
    let s = b.get(at..at + 3)?;
    MONTHS
        .iter()
        .position(|m| m.eq_ignore_ascii_case(s))
        .map(|i| i as u32 + 1)
}

fn valid(m: u32, d: u32, hh: u32, mm: u32, ss: u32) -> bool {
    (1..=12).contains(&m) && (1..=31).contains(&d) && hh < 24 && mm < 60 && ss <= 60
}

fn seconds(y: i64, m: u32, d: u32, hh: u32, mm: u32, ss: u32) -> i64 {
    days_from_civil(y, m, d) * 86_400 + i64::from(hh * 3600 + mm * 60 + ss)
}

/// `HH:MM:SS` at `at`.
fn clock(b: &[u8], at: usize) -> Option<(u32, u32, u32)> {
    if b.get(at + 2) != Some(&b':') || b.get(at + 5) != Some(&b':') {
        return None;
    }
    Some((
        digits(b, at, 2)?,
        digits(b, at + 3, 2)?,
        digits(b, at + 6, 2)?,
    ))
}

/// Skips a fraction (`.123`, `,123456`) at `at`; returns the index after it.
fn fraction(b: &[u8], at: usize) -> usize {
    if matches!(b.get(at), Some(b'.' | b',')) && b.get(at + 1).is_some_and(u8::is_ascii_digit) {
        let mut i = at + 1;
        while b.get(i).is_some_and(u8::is_ascii_digit) {
            i += 1;
        }
        i
    } else {
        at
    }
}

/// A zone at `at`: `Z`, `±HH:MM`, `±HHMM`, ` +0000` (CLF's leading
/// space is the caller's). Returns (offset seconds, index after it).
fn zone(b: &[u8], at: usize) -> (i64, usize) {
    match b.get(at) {
        Some(b'Z') => (0, at + 1),
        Some(&s @ (b'+' | b'-')) => {
            let sign = if s == b'-' { -1 } else { 1 };
            let Some(h) = digits(b, at + 1, 2) else {
                return (0, at);
            };
            let (m, end) = if b.get(at + 3) == Some(&b':') {
                (digits(b, at + 4, 2), at + 6)
            } else {
                (digits(b, at + 3, 2), at + 5)
            };
            match m {
                Some(m) if h < 24 && m < 60 => (sign * i64::from(h * 3600 + m * 60), end),
                _ => (0, at),
            }
        }
        _ => (0, at),
    }
}

/// ISO 8601 / RFC 3339 and its common log spellings at `at`:
/// `2024-01-15T10:23:45.123Z`, `2024-01-15 10:23:45,123`, `2024/01/15
/// 10:23:45` (nginx error log), with or without a zone.
fn iso(b: &[u8], at: usize) -> Option<Stamp> {
    let y = digits(b, at, 4)?;
    let sep = *b.get(at + 4)?;
    if !(sep == b'-' || sep == b'/') || b.get(at + 7) != Some(&sep) {
        return None;
    }
    let m = digits(b, at + 5, 2)?;
    let d = digits(b, at + 8, 2)?;
    if !matches!(b.get(at + 10), Some(b'T' | b' ')) {
        return None;
    }
    let (hh, mm, ss) = clock(b, at + 11)?;
    if !valid(m, d, hh, mm, ss) {
        return None;
    }
    let end = fraction(b, at + 19);
    let (off, end) = zone(b, end);
    Some(Stamp {
        secs: seconds(i64::from(y), m, d, hh, mm, ss) - off,
        start: at,
        end,
        host_follows: false,
    })
}

/// Syslog (RFC 3164): `Jan  5 10:23:45` — no year: `year` is assumed.
fn syslog(b: &[u8], at: usize, year: i64) -> Option<Stamp> {
    let m = month(b, at)?;
    if b.get(at + 3) != Some(&b' ') {
        return None;
    }
    let d = match (b.get(at + 4), b.get(at + 5)) {
        (Some(b' '), Some(c)) if c.is_ascii_digit() => u32::from(c - b'0'),
        _ => digits(b, at + 4, 2)?,
    };
    if b.get(at + 6) != Some(&b' ') {
        return None;
    }
    let (hh, mm, ss) = clock(b, at + 7)?;
    if !valid(m, d, hh, mm, ss) {
        return None;
    }
    Some(Stamp {
        secs: seconds(year, m, d, hh, mm, ss),
        start: at,
        end: fraction(b, at + 15),
        host_follows: true,
    })
}

/// Common/combined log format (Apache, nginx access logs):
/// `[10/Oct/2000:13:55:36 -0700]` at `at` (the bracket included).
fn clf(b: &[u8], at: usize) -> Option<Stamp> {
    if b.get(at) != Some(&b'[') {
        return None;
    }
    let d = digits(b, at + 1, 2)?;
    let m = month(b, at + 4)?;
    if b.get(at + 3) != Some(&b'/') || b.get(at + 7) != Some(&b'/') {
        return None;
    }
    let y = digits(b, at + 8, 4)?;
    if b.get(at + 12) != Some(&b':') {
        return None;
    }
    let (hh, mm, ss) = clock(b, at + 13)?;
    if !valid(m, d, hh, mm, ss) {
        return None;
    }
    let mut end = at + 21;
    let mut off = 0;
    if b.get(end) == Some(&b' ') {
        let (o, e) = zone(b, end + 1);
        if e > end + 1 {
            off = o;
            end = e;
        }
    }
    if b.get(end) != Some(&b']') {
        return None;
    }
    Some(Stamp {
        secs: seconds(i64::from(y), m, d, hh, mm, ss) - off,
        start: at,
        end: end + 1,
        host_follows: false,
    })
}

/// Apache error log: `[Sat Jun 11 03:03:04.123456 2005]` at `at`.
fn apache_error(b: &[u8], at: usize) -> Option<Stamp> {
    if b.get(at) != Some(&b'[') || b.get(at + 4) != Some(&b' ') {
        return None;
    }
    let m = month(b, at + 5)?;
    let d = digits(b, at + 9, 2)?;
    let (hh, mm, ss) = clock(b, at + 12)?;
    let i = fraction(b, at + 20);
    if b.get(i) != Some(&b' ') {
        return None;
    }
    let y = digits(b, i + 1, 4)?;
    if b.get(i + 5) != Some(&b']') || !valid(m, d, hh, mm, ss) {
        return None;
    }
    Some(Stamp {
        secs: seconds(i64::from(y), m, d, hh, mm, ss),
        start: at,
        end: i + 6,
        host_follows: false,
    })
}

/// The timestamp of a line, if it has one in a known format: at the start
/// (after an optional `[` or an RFC 5424 `<PRI>1 `), or the access logs'
/// bracketed date within the first 80 bytes. `year` is assumed by formats
/// without one (syslog).
pub fn find(line: &[u8], year: i64) -> Option<Stamp> {
    let first = *line.first()?;
    if first.is_ascii_digit() {
        if let Some(s) = iso(line, 0) {
            return Some(s);
        }
    } else if first == b'[' {
        if let Some(s) = iso(line, 1)
            .or_else(|| apache_error(line, 0))
            .or_else(|| clf(line, 0))
        {
            return Some(extend_bracket(line, s));
        }
    } else if first == b'<' {
        // RFC 5424: `<34>1 2003-10-11T22:14:15.003Z host app ...`
        let close = line.iter().take(5).position(|&c| c == b'>')?;
        let mut at = close + 1;
        while line.get(at).is_some_and(u8::is_ascii_digit) {
            at += 1;
        }
        if line.get(at) == Some(&b' ') {
            return iso(line, at + 1).map(|s| Stamp {
                host_follows: true,
                ..s
            });
        }
        return None;
    } else if first.is_ascii_uppercase()
        && let Some(s) = syslog(line, 0, year)
    {
        return Some(s);
    }
    // The access logs: `host ident user [date] "request" status size`.
    let window = &line[..line.len().min(80)];
    let at = window.iter().position(|&c| c == b'[')?;
    clf(line, at)
}

/// A bracketed ISO stamp (`[2024-01-15 10:00:00]`) takes its brackets with it.
fn extend_bracket(line: &[u8], s: Stamp) -> Stamp {
    if s.start == 1 && line.get(s.end) == Some(&b']') {
        Stamp {
            start: 0,
            end: s.end + 1,
            ..s
        }
    } else {
        s
    }
}

/// A `--since`/`--until` bound: an ISO 8601 date-time (`2024-01-15T10:00:00Z`,
/// `2024-01-15 10:00:00`; UTC unless a zone is given), a date (`2024-01-15`,
/// midnight UTC), or a duration before `now` (`30m`, `2h`, `1d`).
///
/// # Errors
/// None of those: the message says what is accepted.
pub fn parse_bound(s: &str, now: i64) -> Result<i64, String> {
    let t = s.trim();
    let b = t.as_bytes();
    if let Some(stamp) = iso(b, 0)
        && stamp.end == b.len()
    {
        return Ok(stamp.secs);
    }
    if b.len() == 10
        && let (Some(y), Some(m), Some(d)) = (digits(b, 0, 4), digits(b, 5, 2), digits(b, 8, 2))
        && b[4] == b'-'
        && b[7] == b'-'
        && valid(m, d, 0, 0, 0)
    {
        return Ok(days_from_civil(i64::from(y), m, d) * 86_400);
    }
    if let Ok(d) = agent_bounded::parse_duration(t, agent_bounded::BareNumber::Refused) {
        return Ok(now - d.as_secs() as i64);
    }
    Err(format!(
        "`{s}` is not a time: give an ISO 8601 date-time (2024-01-15T10:00:00Z), a date \
         (2024-01-15) or a duration before now (30m, 2h, 1d)"
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn at(line: &str) -> Option<(String, &str)> {
        find(line.as_bytes(), 2024).map(|s| (format_utc(s.secs), &line[s.end..]))
    }

    #[test]
    fn civil_round_trip() {
        for days in [-800_000, -1, 0, 1, 19_737, 2_932_896] {
            let (y, m, d) = civil_from_days(days);
            assert_eq!(days_from_civil(y, m, d), days);
        }
        assert_eq!(days_from_civil(2024, 1, 15), 19_737);
    }

    #[test]
    fn every_format_names_the_same_instant() {
        let want = "2024-01-15T10:23:45Z".to_string();
        assert_eq!(
            at("2024-01-15T10:23:45Z boot"),
            Some((want.clone(), " boot"))
        );
        assert_eq!(
            at("2024-01-15T12:23:45.123+02:00 x"),
            Some((want.clone(), " x"))
        );
        assert_eq!(
            at("2024-01-15 10:23:45,123 ERROR x"),
            Some((want.clone(), " ERROR x"))
        );
        assert_eq!(
            at("2024/01/15 10:23:45 [error] 1#0"),
            Some((want.clone(), " [error] 1#0"))
        );
        assert_eq!(at("[2024-01-15 10:23:45] x"), Some((want.clone(), " x")));
        assert_eq!(
            at("Jan 15 10:23:45 web sshd[1]: x"),
            Some((want.clone(), " web sshd[1]: x"))
        );
        assert_eq!(
            at("<34>1 2024-01-15T10:23:45Z h a"),
            Some((want.clone(), " h a"))
        );
        assert_eq!(
            at("10.0.0.1 - - [15/Jan/2024:11:23:45 +0100] \"GET / HTTP/1.1\" 200 5"),
            Some((want.clone(), " \"GET / HTTP/1.1\" 200 5"))
        );
        assert_eq!(
            at("[Mon Jan 15 10:23:45.123456 2024] [error] x"),
            Some((want.clone(), " [error] x"))
        );
        assert_eq!(
            at("Jan  5 10:23:45 h x").map(|s| s.0),
            Some("2024-01-05T10:23:45Z".into())
        );
    }

    #[test]
    fn bounds() {
        let now = 1_705_312_800;
        assert_eq!(parse_bound("2024-01-15T10:00:00Z", 0), Ok(now));
        assert_eq!(parse_bound("2024-01-15 12:00:00+02:00", 0), Ok(now));
        assert_eq!(parse_bound("2024-01-15", 0), Ok(now - 36_000));
        assert_eq!(parse_bound("2h", now), Ok(now - 7200));
        assert_eq!(parse_bound("1d", now), Ok(now - 86_400));
        assert!(
            parse_bound("yesterday", now)
                .unwrap_err()
                .contains("`yesterday` is not a time")
        );
    }

    #[test]
    fn lookalikes_are_not_timestamps() {
        assert_eq!(at("2024-13-15T10:23:45Z x"), None);
        assert_eq!(at("12345 items"), None);
        assert_eq!(at("January is cold"), None);
        assert_eq!(at("[INFO] ready"), None);
        assert_eq!(at(""), None);
    }
}
