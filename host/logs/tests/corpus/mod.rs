//! A log generator from known templates, for the grouping-accuracy test,
//! the benches and the comparison with drain3: eleven formats (ISO, Python
//! logging, log4j with Java stack traces, syslog, RFC 5424, Apache/nginx
//! access, nginx error, Apache error, JSON lines, glog, logfmt) and Python
//! tracebacks; variables of every kind (numbers, hex, IPs, UUIDs, paths,
//! durations, quoted strings, key=value, user names). Deterministic: the
//! same seed gives the same corpus. Each record's true template is known.

#![allow(dead_code)]

/// A small deterministic generator (xorshift64*).
pub struct Rng(u64);

impl Rng {
    pub fn new(seed: u64) -> Self {
        Rng(seed | 1)
    }
    pub fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_f491_4f6c_dd1d)
    }
    pub fn below(&mut self, n: u64) -> u64 {
        self.next() % n
    }
    fn pick<'a>(&mut self, items: &[&'a str]) -> &'a str {
        items[self.below(items.len() as u64) as usize]
    }
}

/// The header styles.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Format {
    Iso,
    Python,
    Log4j,
    Syslog,
    Rfc5424,
    Access,
    NginxError,
    ApacheError,
    Json,
    Glog,
    Logfmt,
}

/// One true template: its format, level and message with placeholders
/// `{num} {hex} {ip} {uuid} {path} {dur} {quoted} {user} {size}`; a
/// `trace` template is followed by a stack trace (Java for log4j, Python
/// otherwise).
pub struct Spec {
    pub format: Format,
    pub level: &'static str,
    pub message: &'static str,
    pub trace: bool,
}

const fn s(format: Format, level: &'static str, message: &'static str) -> Spec {
    Spec {
        format,
        level,
        message,
        trace: false,
    }
}

const fn t(format: Format, level: &'static str, message: &'static str) -> Spec {
    Spec {
        format,
        level,
        message,
        trace: true,
    }
}

use Format::*;

pub const SPECS: &[Spec] = &[
    s(Iso, "INFO", "Started worker {num} in {dur}"),
    s(Iso, "INFO", "Connected to database {ip}:{num} as {user}"),
    s(Iso, "WARN", "Slow query took {dur} rows={num} table={user}"),
    s(Iso, "ERROR", "Failed to write {path}: disk quota exceeded"),
    s(Iso, "DEBUG", "cache lookup key={hex} hit={num}"),
    s(Python, "INFO", "Processed batch {uuid} with {num} items"),
    s(
        Python,
        "WARNING",
        "Retrying request to {ip} attempt {num} of 5",
    ),
    t(Python, "ERROR", "Unhandled exception in handler {quoted}"),
    s(Python, "INFO", "User {user} uploaded {path} ({size})"),
    s(
        Log4j,
        "INFO",
        "Request {uuid} completed status={num} in {dur}",
    ),
    t(Log4j, "ERROR", "Transaction {hex} rolled back"),
    s(
        Log4j,
        "WARN",
        "Connection pool exhausted active={num} idle={num}",
    ),
    s(Log4j, "INFO", "Scheduled job {quoted} finished"),
    s(
        Syslog,
        "",
        "sshd[{num}]: Accepted publickey for {user} from {ip} port {num} ssh2",
    ),
    s(
        Syslog,
        "",
        "sshd[{num}]: Failed password for invalid user {user} from {ip} port {num} ssh2",
    ),
    s(
        Syslog,
        "",
        "kernel: [{num}] Out of memory: Killed process {num} ({user})",
    ),
    s(Syslog, "", "CRON[{num}]: ({user}) CMD ({path} --quiet)"),
    s(
        Rfc5424,
        "",
        "app {num} ID{num} - user {user} logged in from {ip}",
    ),
    s(
        Rfc5424,
        "",
        "app {num} ID{num} - session {uuid} expired after {dur}",
    ),
    s(Access, "200", "GET"),
    s(Access, "404", "GET"),
    s(Access, "503", "POST"),
    s(
        NginxError,
        "error",
        "{num}#0: *{num} connect() failed (111: Connection refused) while connecting to upstream, client: {ip}, server: {user}.example.com",
    ),
    s(
        NginxError,
        "warn",
        "{num}#0: *{num} an upstream response is buffered to a temporary file {path} while reading upstream",
    ),
    s(
        ApacheError,
        "core:error",
        "[pid {num}] [client {ip}:{num}] AH00037: Symbolic link not allowed or link target not accessible: {path}",
    ),
    s(
        ApacheError,
        "mpm_event:notice",
        "[pid {num}] AH00489: Apache/2.4.{num} configured -- resuming normal operations",
    ),
    s(Json, "info", "order placed"),
    s(Json, "error", "payment declined"),
    s(Json, "warn", "inventory low"),
    s(
        Glog,
        "I",
        "{num} controller.go:{num}] Reconciling deployment {user}/{user} generation {num}",
    ),
    s(
        Glog,
        "E",
        "{num} reflector.go:{num}] Failed to watch {path}: context deadline exceeded after {dur}",
    ),
    s(
        Logfmt,
        "info",
        "msg={quoted} component=scheduler queue_depth={num}",
    ),
    s(
        Logfmt,
        "error",
        "msg={quoted} component=storage err={quoted} retry_in={dur}",
    ),
    s(Iso, "FATAL", "Out of memory allocating {size} for {path}"),
    s(Iso, "INFO", "Health check {ip} ok latency={dur}"),
];

const USERS: &[&str] = &[
    "alice", "bob", "carol", "dave", "erin", "frank", "grace", "heidi",
];
const WORDS: &[&str] = &[
    "sync orders",
    "nightly report",
    "cleanup temp",
    "reindex search",
];
const PATHS: &[&str] = &[
    "/var/log/app",
    "/srv/data/uploads",
    "/tmp/cache",
    "/home/deploy/releases",
];
const MONTHS: &[&str] = &["Jan", "Feb", "Mar"];

fn fill(rng: &mut Rng, message: &str, out: &mut String) {
    let mut rest = message;
    while let Some(open) = rest.find('{') {
        out.push_str(&rest[..open]);
        let close = open + rest[open..].find('}').expect("closed placeholder");
        let name = &rest[open + 1..close];
        match name {
            "num" => out.push_str(&rng.below(100_000).to_string()),
            "hex" => out.push_str(&format!("0x{:x}", rng.next() >> 16)),
            "ip" => out.push_str(&format!(
                "10.{}.{}.{}",
                rng.below(256),
                rng.below(256),
                rng.below(256)
            )),
            "uuid" => {
                let a = rng.next();
                let b = rng.next();
                out.push_str(&format!(
                    "{:08x}-{:04x}-4{:03x}-a{:03x}-{:012x}",
                    a >> 32,
                    (a >> 16) & 0xffff,
                    a & 0xfff,
                    b >> 52,
                    b & 0xffff_ffff_ffff
                ));
            }
            "path" => {
                let base = rng.pick(PATHS);
                out.push_str(&format!("{base}/f{}.log", rng.below(1000)));
            }
            "dur" => {
                let unit = rng.pick(&["ms", "s", "us"]);
                out.push_str(&format!("{}{unit}", rng.below(5000)));
            }
            "quoted" => {
                let w = rng.pick(WORDS);
                out.push_str(&format!("\"{w} {}\"", rng.below(100)));
            }
            "user" => out.push_str(rng.pick(USERS)),
            "size" => out.push_str(&format!("{}KB", rng.below(90_000))),
            other => panic!("unknown placeholder {other}"),
        }
        rest = &rest[close + 1..];
    }
    out.push_str(rest);
}

/// Appends one record of template `i` at second `secs` to `out` and returns
/// how many lines it has.
pub fn record(rng: &mut Rng, i: usize, secs: i64, out: &mut String) -> usize {
    let spec = &SPECS[i];
    let day = 15 + (secs / 86_400) as u32 % 10;
    let (hh, mm, ss) = (secs / 3600 % 24, secs / 60 % 60, secs % 60);
    let ms = rng.below(1000);
    let iso = format!("2024-01-{day:02}T{hh:02}:{mm:02}:{ss:02}.{ms:03}Z");
    let py = format!("2024-01-{day:02} {hh:02}:{mm:02}:{ss:02},{ms:03}");
    let mut msg = String::new();
    fill(rng, spec.message, &mut msg);
    match spec.format {
        Iso => out.push_str(&format!("{iso} {} {msg}", spec.level)),
        Python => out.push_str(&format!("{py} - app.worker - {} - {msg}", spec.level)),
        Log4j => out.push_str(&format!(
            "{py} {} [pool-{}-thread-{}] com.example.orders.Service - {msg}",
            spec.level,
            rng.below(4),
            rng.below(16)
        )),
        Syslog => out.push_str(&format!(
            "{} {day:2} {hh:02}:{mm:02}:{ss:02} web{} {msg}",
            MONTHS[0],
            rng.below(9)
        )),
        Rfc5424 => out.push_str(&format!("<34>1 {iso} host{} {msg}", rng.below(9))),
        Access => {
            let status: u32 = spec.level.parse().expect("status");
            let status = status + rng.below(3) as u32 % if status == 200 { 2 } else { 1 };
            out.push_str(&format!(
                "10.0.{}.{} - {} [{day:02}/Jan/2024:{hh:02}:{mm:02}:{ss:02} +0000] \"{} /api/v1/items/{} HTTP/1.1\" {status} {}",
                rng.below(256),
                rng.below(256),
                rng.pick(&["-", "alice", "bob"]),
                spec.message,
                rng.below(10_000),
                rng.below(100_000)
            ));
        }
        NginxError => out.push_str(&format!(
            "2024/01/{day:02} {hh:02}:{mm:02}:{ss:02} [{}] {msg}",
            spec.level
        )),
        ApacheError => out.push_str(&format!(
            "[Mon Jan {day:02} {hh:02}:{mm:02}:{ss:02}.{:06} 2024] [{}] {msg}",
            rng.below(1_000_000),
            spec.level
        )),
        Json => out.push_str(&format!(
            "{{\"ts\":\"{iso}\",\"level\":\"{}\",\"msg\":\"{}\",\"request_id\":\"{:x}\",\"amount\":{}}}",
            spec.level,
            spec.message,
            rng.next(),
            rng.below(10_000)
        )),
        Glog => out.push_str(&format!(
            "{}01{day:02} {hh:02}:{mm:02}:{ss:02}.{:06} {msg}",
            spec.level,
            rng.below(1_000_000)
        )),
        Logfmt => out.push_str(&format!("ts={iso} level={} {msg}", spec.level)),
    }
    out.push('\n');
    if !spec.trace {
        return 1;
    }
    if spec.format == Log4j {
        let depth = 2 + rng.below(4) as usize;
        out.push_str(&format!(
            "java.lang.IllegalStateException: ledger {} is locked\n",
            rng.below(1000)
        ));
        for d in 0..depth {
            out.push_str(&format!(
                "\tat com.example.orders.Ledger.step{d}(Ledger.java:{})\n",
                rng.below(500)
            ));
        }
        out.push_str(&format!("\t... {} more\n", rng.below(40)));
        depth + 3
    } else {
        let depth = 1 + rng.below(3) as usize;
        out.push_str("Traceback (most recent call last):\n");
        for d in 0..depth {
            out.push_str(&format!(
                "  File \"/srv/app/handlers.py\", line {}, in step{d}\n    result = process(item)\n",
                rng.below(400)
            ));
        }
        out.push_str(&format!("KeyError: 'item-{}'\n", rng.below(100)));
        3 + 2 * depth
    }
}

/// A corpus of `records` records (templates chosen with skewed frequencies
/// so some are rare) and the true template of every line.
pub fn corpus(seed: u64, records: usize) -> (String, Vec<usize>) {
    let mut rng = Rng::new(seed);
    let mut out = String::new();
    let mut truth = Vec::new();
    for r in 0..records {
        let i = pick(&mut rng, false);
        let lines = record(&mut rng, i, r as i64, &mut out);
        truth.extend(std::iter::repeat_n(i, lines));
    }
    (out, truth)
}

/// A template index, skewed: half the records from the first third of the
/// templates. `plain`: only single-line records of line formats (no stack
/// traces, no JSON lines).
pub fn pick(rng: &mut Rng, plain: bool) -> usize {
    loop {
        let i = if rng.below(2) == 0 {
            rng.below(SPECS.len() as u64 / 3) as usize
        } else {
            rng.below(SPECS.len() as u64) as usize
        };
        if !plain || (!SPECS[i].trace && SPECS[i].format != Format::Json) {
            return i;
        }
    }
}

/// Plain lines (see [`pick`]) until `bytes` are reached, appended to `out`
/// with each line's true template appended to `truth` (when given).
pub fn plain(seed: u64, bytes: usize, out: &mut String, mut truth: Option<&mut Vec<usize>>) {
    let mut rng = Rng::new(seed);
    let mut r = 0i64;
    while out.len() < bytes {
        let i = pick(&mut rng, true);
        record(&mut rng, i, r, out);
        if let Some(t) = truth.as_deref_mut() {
            t.push(i);
        }
        r += 1;
    }
}

/// Grouping accuracy (Zhu et al., ICSE-SEIP 2019, as loghub reports it): a
/// line is correct when the set of lines its predicted group holds is
/// exactly the set of lines of its true group.
pub fn grouping_accuracy(predicted: &[u64], truth: &[usize]) -> f64 {
    use std::collections::HashMap;
    assert_eq!(predicted.len(), truth.len());
    let mut pred_truths: HashMap<u64, HashMap<usize, usize>> = HashMap::new();
    let mut true_sizes: HashMap<usize, usize> = HashMap::new();
    for (&p, &t) in predicted.iter().zip(truth) {
        *pred_truths.entry(p).or_default().entry(t).or_default() += 1;
        *true_sizes.entry(t).or_default() += 1;
    }
    let mut correct = 0usize;
    for truths in pred_truths.values() {
        if truths.len() == 1 {
            let (t, n) = truths.iter().next().expect("one");
            if true_sizes[t] == *n {
                correct += n;
            }
        }
    }
    correct as f64 / predicted.len() as f64
}
