//! What a line is: its header (timestamp, severity, where the message
//! starts; JSON lines read by field), or the continuation of the record
//! before it (Java and Python stack traces, indented lines).

use crate::severity::{self, Severity};
use crate::time;

/// The header of a line that starts a record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Header {
    /// Unix seconds.
    pub time: Option<i64>,
    pub severity: Severity,
    /// The message the miner sees.
    pub content: Content,
}

/// The message: a range of the line, or built (a JSON line's fields).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Content {
    Range(usize, usize),
    Built(String),
}

/// The header of `line` (already valid UTF-8). `year` is assumed by
/// syslog stamps.
pub fn header(line: &str, year: i64) -> Header {
    let b = line.as_bytes();
    if b.first() == Some(&b'{')
        && b.last() == Some(&b'}')
        && let Some(h) = json_header(line)
    {
        return h;
    }
    let stamp = time::find(b, year);
    // A stamp at the start is header; an access log's date in the middle
    // stays in the message, where its tokens are masked as variables.
    let mut start = 0;
    let end = b.len();
    if let Some(s) = stamp
        && s.start == 0
    {
        start = s.end;
        if s.host_follows {
            start = skip_token(b, start);
        }
    }
    let severity = severity::of_line(&b[start..end]);
    Header {
        time: stamp.map(|s| s.secs),
        severity,
        content: Content::Range(start, end),
    }
}

fn skip_token(b: &[u8], mut i: usize) -> usize {
    while i < b.len() && b[i] == b' ' {
        i += 1;
    }
    while i < b.len() && b[i] != b' ' {
        i += 1;
    }
    i
}

const TIME_KEYS: [&str; 5] = ["time", "timestamp", "@timestamp", "ts", "t"];
const LEVEL_KEYS: [&str; 5] = ["level", "severity", "lvl", "log.level", "loglevel"];
const MESSAGE_KEYS: [&str; 4] = ["msg", "message", "event", "log"];

/// A JSON object line: time, level and message from their usual fields;
/// the other fields become `key=value` tokens after the message.
fn json_header(line: &str) -> Option<Header> {
    let v: serde_json::Map<String, serde_json::Value> = serde_json::from_str(line).ok()?;
    let mut time = None;
    let mut severity = Severity::Unknown;
    let mut message = String::new();
    let mut rest = String::new();
    for (k, val) in &v {
        let lk = k.to_ascii_lowercase();
        if TIME_KEYS.contains(&lk.as_str()) && time.is_none() {
            time = match val {
                serde_json::Value::String(s) => time::find(s.as_bytes(), 1970).map(|s| s.secs),
                serde_json::Value::Number(n) => n.as_f64().map(|f| {
                    // Seconds or milliseconds since the epoch.
                    if f > 1e11 {
                        (f / 1000.0) as i64
                    } else {
                        f as i64
                    }
                }),
                _ => None,
            };
        } else if LEVEL_KEYS.contains(&lk.as_str()) {
            if let serde_json::Value::String(s) = val {
                severity = Severity::from_word(s.as_bytes()).unwrap_or_default();
            } else if let Some(n) = val.as_u64() {
                // bunyan/pino numbers: 10 trace … 60 fatal.
                severity = match n {
                    0..=10 => Severity::Trace,
                    11..=20 => Severity::Debug,
                    21..=30 => Severity::Info,
                    31..=40 => Severity::Warn,
                    41..=50 => Severity::Error,
                    _ => Severity::Fatal,
                };
            }
        } else if MESSAGE_KEYS.contains(&lk.as_str()) && message.is_empty() {
            match val {
                serde_json::Value::String(s) => message.push_str(s),
                other => message.push_str(&other.to_string()),
            }
        } else {
            rest.push(' ');
            rest.push_str(k);
            rest.push_str("=v");
        }
    }
    message.push_str(&rest);
    Some(Header {
        time,
        severity,
        content: Content::Built(message),
    })
}

/// How a line without a timestamp relates to the record before it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Continuation {
    /// Not a continuation: a record of its own.
    No,
    /// Part of the record before it.
    Yes,
    /// The start of a Python traceback.
    TracebackStart,
    /// The last line of a Python traceback (`ValueError: ...`).
    TracebackEnd,
}

/// Whether `line` (which has no timestamp) continues the record before it;
/// `in_traceback`: that record holds an unfinished Python traceback.
pub fn continuation(line: &str, in_traceback: bool) -> Continuation {
    let b = line.as_bytes();
    match b.first() {
        None => return Continuation::Yes,
        Some(b' ' | b'\t') => return Continuation::Yes,
        _ => {}
    }
    if line.starts_with("Traceback (most recent call last)") {
        return Continuation::TracebackStart;
    }
    if line.starts_with("Caused by:")
        || line.starts_with("Suppressed:")
        || line.starts_with("During handling of the above exception")
        || line.starts_with("The above exception was the direct cause")
        || (line.starts_with("...") && line.ends_with(" more"))
    {
        return Continuation::Yes;
    }
    let first = line.split([' ', ':']).next().unwrap_or("");
    let exceptionish = first.ends_with("Exception")
        || first.ends_with("Error")
        || first.ends_with("Exit")
        || first.ends_with("Interrupt");
    let after = &line[first.len()..];
    let shaped = first
        .bytes()
        .all(|c| c.is_ascii_alphanumeric() || c == b'.' || c == b'_' || c == b'$')
        && (after.is_empty() || after.starts_with(':'));
    if exceptionish && shaped {
        if in_traceback {
            return Continuation::TracebackEnd;
        }
        if first.contains('.') {
            // java.lang.IllegalStateException: ...
            return Continuation::Yes;
        }
    }
    Continuation::No
}

#[cfg(test)]
mod tests {
    use super::*;

    fn content(line: &str) -> String {
        match header(line, 2024).content {
            Content::Range(s, e) => line[s..e].to_string(),
            Content::Built(s) => s,
        }
    }

    #[test]
    fn headers_are_split_from_messages() {
        assert_eq!(
            content("Jan 15 10:00:00 web sshd[12]: Accepted key"),
            " sshd[12]: Accepted key"
        );
        assert_eq!(content("2024-01-15T10:00:00Z ERROR x"), " ERROR x");
        let h = header(
            r#"{"ts":"2024-01-15T10:00:00Z","level":"error","msg":"db down","db":"main"}"#,
            2024,
        );
        assert_eq!(h.severity, Severity::Error);
        assert_eq!(h.time, Some(1_705_312_800));
        assert_eq!(h.content, Content::Built("db down db=v".into()));
        let h = header(r#"{"time":1705312800123,"level":50,"message":"x"}"#, 2024);
        assert_eq!((h.time, h.severity), (Some(1_705_312_800), Severity::Error));
        assert_eq!(header("{not json}", 2024).content, Content::Range(0, 10));
    }

    #[test]
    fn stack_traces_continue_their_first_line() {
        use Continuation::*;
        assert_eq!(continuation("\tat com.x.Y.z(Y.java:10)", false), Yes);
        assert_eq!(
            continuation("java.lang.IllegalStateException: boom", false),
            Yes
        );
        assert_eq!(
            continuation("Caused by: java.io.IOException: x", false),
            Yes
        );
        assert_eq!(continuation("... 12 more", false), Yes);
        assert_eq!(
            continuation("Traceback (most recent call last):", false),
            TracebackStart
        );
        assert_eq!(continuation("  File \"a.py\", line 3, in f", true), Yes);
        assert_eq!(continuation("ValueError: bad value", true), TracebackEnd);
        assert_eq!(continuation("KeyboardInterrupt", true), TracebackEnd);
        assert_eq!(continuation("ValueError: bad value", false), No);
        assert_eq!(continuation("server started", false), No);
        assert_eq!(continuation("", false), Yes);
    }
}
