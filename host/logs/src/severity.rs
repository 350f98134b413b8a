//! The severity of a log record: an explicit level word near the start of
//! the line (`ERROR`, `[warn]`, `level=error`, `<E>`, glog's `E0115`), an
//! access log's status code, or a JSON line's level field.

use serde::Serialize;

/// Severity levels, lowest first.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Default)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    /// No level recognised.
    #[default]
    Unknown,
    Trace,
    Debug,
    Info,
    Notice,
    Warn,
    Error,
    Fatal,
}

impl Severity {
    pub const ALL: [Severity; 8] = [
        Severity::Unknown,
        Severity::Trace,
        Severity::Debug,
        Severity::Info,
        Severity::Notice,
        Severity::Warn,
        Severity::Error,
        Severity::Fatal,
    ];

    pub fn name(self) -> &'static str {
        match self {
            Severity::Unknown => "unknown",
            Severity::Trace => "trace",
            Severity::Debug => "debug",
            Severity::Info => "info",
            Severity::Notice => "notice",
            Severity::Warn => "warn",
            Severity::Error => "error",
            Severity::Fatal => "fatal",
        }
    }

    /// Error or fatal.
    pub fn is_error(self) -> bool {
        self >= Severity::Error
    }

    /// A level word (any case), e.g. `WARNING`, `err`, `Critical`.
    pub fn from_word(w: &[u8]) -> Option<Severity> {
        if w.is_empty() || w.len() > 9 {
            return None;
        }
        let mut buf = [0u8; 9];
        for (d, s) in buf.iter_mut().zip(w) {
            *d = s.to_ascii_lowercase();
        }
        Some(match &buf[..w.len()] {
            b"trace" | b"finest" | b"finer" => Severity::Trace,
            b"debug" | b"dbg" | b"fine" => Severity::Debug,
            b"info" | b"inf" | b"information" => Severity::Info,
            b"notice" | b"note" => Severity::Notice,
            b"warn" | b"warning" | b"wrn" => Severity::Warn,
            b"error" | b"err" | b"severe" | b"fail" => Severity::Error,
            b"fatal" | b"critical" | b"crit" | b"emerg" | b"alert" | b"panic" | b"emergency" => {
                Severity::Fatal
            }
            _ => return None,
        })
    }
}

/// The level of `content` (the line after its timestamp): the first of its
/// first six tokens that is a level word, bare or wrapped in `[]`, `<>`,
/// `()`, followed by `:`, or written `level=WORD`; else an access log's
/// status (5xx error, 4xx warn, else info); else glog's `E0115` prefix.
pub fn of_line(content: &[u8]) -> Severity {
    for tok in content
        .split(|c| c.is_ascii_whitespace())
        .filter(|t| !t.is_empty())
        .take(6)
    {
        let mut w = tok;
        if let Some(eq) = w.iter().position(|&c| c == b'=') {
            let key = &w[..eq];
            if key.eq_ignore_ascii_case(b"level")
                || key.eq_ignore_ascii_case(b"lvl")
                || key.eq_ignore_ascii_case(b"severity")
            {
                w = &w[eq + 1..];
            } else {
                continue;
            }
        }
        let w = trim_wrap(w);
        if let Some(s) = Severity::from_word(w) {
            return s;
        }
    }
    if let Some(s) = access_status(content) {
        return s;
    }
    glog(content).unwrap_or_default()
}

fn trim_wrap(w: &[u8]) -> &[u8] {
    let mut w = w;
    while let [b'[' | b'<' | b'(' | b'"', rest @ ..] = w {
        w = rest;
    }
    while let [rest @ .., b']' | b'>' | b')' | b':' | b',' | b'"' | b'|'] = w {
        w = rest;
    }
    w
}

/// `"GET /x HTTP/1.1" 503 12`: the status after the quoted request.
fn access_status(content: &[u8]) -> Option<Severity> {
    let q = content.iter().position(|&c| c == b'"')?;
    let close = q + 1 + content[q + 1..].iter().position(|&c| c == b'"')?;
    let req = &content[q + 1..close];
    if !req.windows(5).any(|w| w == b"HTTP/") {
        return None;
    }
    let rest = content.get(close + 1..)?;
    let rest = rest.strip_prefix(b" ")?;
    let code = rest.get(..3)?;
    if !code.iter().all(u8::is_ascii_digit) || rest.get(3).is_some_and(|c| !c.is_ascii_whitespace())
    {
        return None;
    }
    Some(match code[0] {
        b'5' => Severity::Error,
        b'4' => Severity::Warn,
        _ => Severity::Info,
    })
}

/// glog / klog: `E0115 10:23:45.123456 1 file.go:42] msg`.
fn glog(content: &[u8]) -> Option<Severity> {
    let (&l, rest) = content.split_first()?;
    if rest.len() < 5 || !rest[..4].iter().all(u8::is_ascii_digit) || rest[4] != b' ' {
        return None;
    }
    match l {
        b'I' => Some(Severity::Info),
        b'W' => Some(Severity::Warn),
        b'E' => Some(Severity::Error),
        b'F' => Some(Severity::Fatal),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn levels_in_their_usual_spellings() {
        let cases = [
            (" ERROR [main] c.e.Foo - boom", Severity::Error),
            (" [warn] 12#0: disk", Severity::Warn),
            (" web sshd[1]: <crit> x", Severity::Fatal),
            (" level=error msg=\"x\"", Severity::Error),
            (" INFO: started", Severity::Info),
            (" host app: Warning: low", Severity::Warn),
            ("E0115 10:23:45.1 1 f.go:1] x", Severity::Error),
            (" \"GET /a HTTP/1.1\" 503 12", Severity::Error),
            (" \"GET /a HTTP/1.1\" 404 12", Severity::Warn),
            (" \"GET /a HTTP/1.1\" 200 12", Severity::Info),
            (" the user said that he saw an error", Severity::Unknown),
            (" plain text", Severity::Unknown),
        ];
        for (line, want) in cases {
            assert_eq!(of_line(line.as_bytes()), want, "{line}");
        }
    }
}
