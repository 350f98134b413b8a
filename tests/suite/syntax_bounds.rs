//! The `syntax` import needs no permission, so any skill can make the host parse and
//! match: what it may cost the host is bounded. The `guest-syntax-hostile` component
//! tries what an attacker did — a query whose captures repeat an 8 MiB string 96 times,
//! a quantified pattern that keeps the matcher busy for minutes, a query nested 100 000
//! deep, a query of 5 000 patterns — and each is refused within the call's time, without
//! the host's memory growing, with a refusal naming the limit and an audit entry.
//!
//! Each call runs on a thread of its own and the test waits for it with a deadline of
//! its own, so a host that blocks (as before these bounds) fails the test instead of
//! hanging it; while it waits, the test samples the process's resident memory.

use std::sync::mpsc;
use std::time::{Duration, Instant};

use agent_runtime::{CallError, Limits};
use serde_json::json;

use crate::common::{Harness, guest};

/// The call's time limit in these tests.
const CALL_TIMEOUT: Duration = Duration::from_secs(4);
/// How long past the call's limit the test waits before calling the host stuck.
const SLACK: Duration = Duration::from_secs(2);
/// How much the process's resident memory may grow during one call. The guest's own
/// 8 MiB source (and its copies: the guest's, the host's, the parser's) fits well
/// within it; 96 copies of it (768 MiB) do not.
const RSS_MARGIN: u64 = 400 * 1024 * 1024;

/// What one hostile call did.
struct Outcome {
    /// The tool's text, or the host's error.
    result: Result<String, String>,
    /// From the start of the call to its answer.
    elapsed: Duration,
    /// The most the resident memory grew over its value before the call, bytes.
    rss_growth: u64,
    /// The skill's `syntax` audit entries as (target, decision).
    audited: Vec<(String, String)>,
}

/// The process's resident memory, bytes (`VmRSS` of /proc/self/status).
fn rss() -> u64 {
    let status = std::fs::read_to_string("/proc/self/status").expect("reading /proc/self/status");
    let kib: u64 = status
        .lines()
        .find_map(|l| l.strip_prefix("VmRSS:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmRSS in /proc/self/status");
    kib * 1024
}

/// Loads `guest-syntax-hostile` and calls `tool` on a thread of its own; fails the test
/// when the call does not end within [`CALL_TIMEOUT`] + [`SLACK`].
fn hostile_call(tool: &'static str) -> Outcome {
    // Build the component before any clock starts.
    let component = guest("guest-syntax-hostile");
    let (loaded_tx, loaded_rx) = mpsc::channel();
    let (done_tx, done_rx) = mpsc::channel();
    std::thread::spawn(move || {
        let rt = tokio::runtime::Builder::new_multi_thread()
            .worker_threads(2)
            .enable_all()
            .build()
            .expect("a tokio runtime");
        rt.block_on(async move {
            let limits = Limits {
                call_timeout: CALL_TIMEOUT,
                ..Limits::default()
            };
            let h = Harness::with_limits(limits, &[]);
            let skill = h
                .load_guest(&component, "syntax-hostile", "")
                .expect("guest-syntax-hostile loads");
            loaded_tx.send(()).expect("the test waits");
            let result = match h.call(&skill, tool, json!({})).await {
                Ok(Ok(out)) => Ok(out.text),
                Ok(Err(e)) => Err(format!("tool error: {e:?}")),
                Err(e) => Err(match e {
                    CallError::Timeout { .. } => format!("host stopped the call: {e}"),
                    other => format!("host error: {other}"),
                }),
            };
            let audited = h
                .audit_of("syntax-hostile")
                .into_iter()
                .filter(|(c, _, _)| c == "syntax")
                .map(|(_, t, d)| (t, d))
                .collect::<Vec<_>>();
            let _ = done_tx.send((result, audited));
        });
    });
    loaded_rx
        .recv_timeout(Duration::from_secs(600))
        .expect("the component loads");
    let before = rss();
    let start = Instant::now();
    let mut peak = before;
    loop {
        match done_rx.recv_timeout(Duration::from_millis(20)) {
            Ok((result, audited)) => {
                eprintln!(
                    "`{tool}`: answered in {:?}, resident memory grew at most {} MiB",
                    start.elapsed(),
                    peak.saturating_sub(before) >> 20
                );
                return Outcome {
                    result,
                    elapsed: start.elapsed(),
                    rss_growth: peak.saturating_sub(before),
                    audited,
                };
            }
            Err(mpsc::RecvTimeoutError::Timeout) => {
                peak = peak.max(rss());
                assert!(
                    peak.saturating_sub(before) < RSS_MARGIN,
                    "`{tool}`: the host's memory grew by {} MiB during the call",
                    (peak - before) >> 20
                );
                assert!(
                    start.elapsed() < CALL_TIMEOUT + SLACK,
                    "`{tool}`: the host is still busy after {:?} (the call's limit is \
                     {CALL_TIMEOUT:?})",
                    start.elapsed()
                );
            }
            Err(mpsc::RecvTimeoutError::Disconnected) => panic!("`{tool}`: the call thread died"),
        }
    }
}

/// The checks every hostile call must pass: it ended within the call's limit, the memory
/// did not grow past the margin, and the guest got `refusal` and the audit log one
/// `syntax` entry `(target, decision)`.
fn assert_refused(tool: &str, o: &Outcome, refusal: &str, audited: (&str, &str)) {
    assert!(
        o.elapsed < CALL_TIMEOUT + SLACK,
        "`{tool}` took {:?}",
        o.elapsed
    );
    assert!(
        o.rss_growth < RSS_MARGIN,
        "`{tool}`: memory grew {} MiB",
        o.rss_growth >> 20
    );
    assert_eq!(o.result.as_deref(), Ok(refusal), "`{tool}`");
    assert_eq!(
        o.audited,
        [(audited.0.to_string(), audited.1.to_string())],
        "`{tool}`"
    );
}

/// The most bytes one answer may take: a quarter of the guest's 256 MiB memory.
const RESULT_LIMIT: usize = 64 * 1024 * 1024;
/// What the host counts for each match besides its text: 32 bytes for the match and 128
/// for its one capture.
const MATCH_COST: usize = 32 + 128;

/// The result-size refusal for the `nested` case (the size at which it is refused): the
/// matches come outermost list first, each capturing its whole text; the first whose cost
/// passes [`RESULT_LIMIT`] is refused before its text is copied.
fn nested_refusal_size() -> usize {
    let string = 2 + 8 * 1024 * 1024 - 300;
    let mut cost = 0;
    for depth in (1..=96usize).rev() {
        cost += MATCH_COST + string + 2 * depth;
        if cost > RESULT_LIMIT {
            return cost;
        }
    }
    panic!("96 captures of 8 MiB fit in {RESULT_LIMIT} bytes");
}

#[test]
fn syntax_captures_of_an_8_mib_string_96_times_are_refused_before_they_are_copied() {
    let o = hostile_call("nested");
    let reason = format!(
        "result: {} bytes, over the limit of {RESULT_LIMIT} bytes",
        nested_refusal_size()
    );
    assert_refused(
        "nested",
        &o,
        &format!("error: CapabilityError::LimitExceeded(\"syntax.query: {reason}\")"),
        (&format!("python: {reason}"), "too-large"),
    );
}

#[test]
fn syntax_a_query_that_keeps_the_matcher_busy_is_stopped_before_the_calls_deadline() {
    let o = hostile_call("quantified");
    // The query's deadline is the call's, less a tenth of the time left (at most 1 s)
    // kept for the skill to answer: the guest gets the refusal and the call ends in time.
    let text = o.result.clone().unwrap_or_else(|e| panic!("{e}"));
    let prefix = "error: CapabilityError::LimitExceeded(\"syntax.query: the query was stopped at its deadline, after ";
    assert!(text.starts_with(prefix), "{text}");
    assert!(
        text.ends_with(
            "; the query's deadline is the call's, less a tenth of the time left (at most 1s) \
             kept for the skill to answer: query a smaller source or a simpler pattern\")"
        ),
        "{text}"
    );
    assert!(o.elapsed < CALL_TIMEOUT + SLACK, "took {:?}", o.elapsed);
    assert!(
        o.rss_growth < RSS_MARGIN,
        "memory grew {} MiB",
        o.rss_growth >> 20
    );
    let [(target, decision)] = o.audited.as_slice() else {
        panic!("{:?}", o.audited)
    };
    assert!(
        target.starts_with("python: the query was stopped at its deadline, after "),
        "{target}"
    );
    assert_eq!(decision, "timed-out");
}

#[test]
fn syntax_a_query_nested_100_000_deep_is_refused_before_it_is_compiled() {
    let o = hostile_call("deep-query");
    let reason = "query nesting: 100000 levels, over the limit of 64 levels";
    assert_refused(
        "deep-query",
        &o,
        &format!("error: CapabilityError::LimitExceeded(\"syntax.query: {reason}\")"),
        (&format!("python: {reason}"), "too-large"),
    );
}

#[test]
fn syntax_a_query_of_5000_patterns_is_refused_before_it_is_compiled() {
    let o = hostile_call("patterns");
    let reason = "query nodes: 5000 nodes, over the limit of 1024 nodes";
    assert_refused(
        "patterns",
        &o,
        &format!("error: CapabilityError::LimitExceeded(\"syntax.query: {reason}\")"),
        (&format!("python: {reason}"), "too-large"),
    );
}
