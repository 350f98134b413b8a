//! The one duration syntax of the workspace: a whole number followed by a
//! unit — `ms`, `s`, `m`, `h` or `d` (`500ms`, `120s`, `5m`, `1h`, `365d`).
//! Configuration, manifests (`timeout`, `exec_timeout`), `agent run
//! --timeout` and `agent registry --expires` all read durations here; each
//! caller words its own error (naming its file, field or flag).

use std::fmt;
use std::time::Duration;

/// Why a text is not a duration.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum DurationError {
    /// Not a whole number followed by a known unit.
    Malformed,
    /// Zero: every duration the agent reads must be greater than zero.
    Zero,
    /// Too large to represent.
    TooLarge,
}

impl fmt::Display for DurationError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            DurationError::Malformed => {
                "expected a whole number and a unit: ms, s, m, h or d (e.g. `500ms`, `30s`, `5m`)"
            }
            DurationError::Zero => "expected a duration greater than zero",
            DurationError::TooLarge => "the duration is too large",
        })
    }
}

impl std::error::Error for DurationError {}

/// Whether a number without a unit is read as seconds (`120` = `120s`) or
/// refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum BareNumber {
    /// `120` means 120 seconds.
    Seconds,
    /// A unit is required.
    Refused,
}

/// Parses `s` (surrounding whitespace ignored).
///
/// # Errors
/// [`DurationError`] when `s` is not a duration, is zero or overflows.
pub fn parse_duration(s: &str, bare: BareNumber) -> Result<Duration, DurationError> {
    let s = s.trim();
    let digits = s.find(|c: char| !c.is_ascii_digit()).unwrap_or(s.len());
    let (num, unit) = s.split_at(digits);
    let n: u64 = num.parse().map_err(|_| DurationError::Malformed)?;
    let secs = |factor: u64| {
        n.checked_mul(factor)
            .map(Duration::from_secs)
            .ok_or(DurationError::TooLarge)
    };
    let d = match unit {
        "ms" => Duration::from_millis(n),
        "s" => secs(1)?,
        "" if bare == BareNumber::Seconds => secs(1)?,
        "m" => secs(60)?,
        "h" => secs(3600)?,
        "d" => secs(86_400)?,
        _ => return Err(DurationError::Malformed),
    };
    if d.is_zero() {
        return Err(DurationError::Zero);
    }
    Ok(d)
}

/// Formats a duration the way [`parse_duration`] reads it, in the largest
/// exact unit up to hours.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms.is_multiple_of(3_600_000) && ms > 0 {
        format!("{}h", ms / 3_600_000)
    } else if ms.is_multiple_of(60_000) && ms > 0 {
        format!("{}m", ms / 60_000)
    } else if ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else {
        format!("{ms}ms")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_unit_reads_and_formats_back() {
        for (text, d) in [
            ("500ms", Duration::from_millis(500)),
            ("30s", Duration::from_secs(30)),
            ("5m", Duration::from_secs(300)),
            ("1h", Duration::from_secs(3600)),
            ("2d", Duration::from_secs(172_800)),
            (" 120s ", Duration::from_secs(120)),
        ] {
            assert_eq!(parse_duration(text, BareNumber::Refused), Ok(d), "{text}");
        }
        assert_eq!(format_duration(Duration::from_secs(600)), "10m");
        assert_eq!(format_duration(Duration::from_millis(1500)), "1500ms");
        assert_eq!(
            parse_duration(
                &format_duration(Duration::from_secs(7200)),
                BareNumber::Refused
            ),
            Ok(Duration::from_secs(7200))
        );
    }

    #[test]
    fn a_bare_number_is_seconds_only_where_the_caller_says_so() {
        assert_eq!(
            parse_duration("90", BareNumber::Seconds),
            Ok(Duration::from_secs(90))
        );
        assert_eq!(
            parse_duration("90", BareNumber::Refused),
            Err(DurationError::Malformed)
        );
    }

    #[test]
    fn bad_zero_and_huge_durations_are_refused_with_the_reason() {
        for bad in ["", "s", "soon", "5w", "-5s", "1.5h", "5 m"] {
            assert_eq!(
                parse_duration(bad, BareNumber::Seconds),
                Err(DurationError::Malformed),
                "{bad}"
            );
        }
        assert_eq!(
            parse_duration("0s", BareNumber::Seconds),
            Err(DurationError::Zero)
        );
        assert_eq!(
            parse_duration("18446744073709551615d", BareNumber::Seconds),
            Err(DurationError::TooLarge)
        );
    }
}
