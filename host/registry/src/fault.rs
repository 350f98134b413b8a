//! Fault injection for the crash-safety tests, in debug builds only (a
//! release build compiles every point to nothing).
//!
//! - `AGENT_FAULT_AT=<point>`: the process kills itself with SIGKILL at that
//!   point (no destructor runs, no file is cleaned: a crash or `kill -9`);
//! - `AGENT_FAULT_WAIT_AT=<point>`: it prints `fault: waiting at <point>` to
//!   stderr and waits there, for a test to signal it (Ctrl-C);
//! - `AGENT_FAULT_NO_EXCHANGE=1`: a replace takes the move-aside path, as
//!   where `renameat2(RENAME_EXCHANGE)` is not available.
//!
//! The points: `install:staged` (verified in staging, nothing in place),
//! `install:after-rename` (a first install in place), `install:after-exchange`
//! (the new version in place, the previous one in staging),
//! `install:after-aside` and `install:after-replace` (the move-aside path,
//! before and after the new version is in place), `remove:after-rename` (the
//! skill renamed to its `.agent-removing-…` entry, not yet deleted).

/// A point where a test may stop the process.
pub(crate) fn point(name: &str) {
    #[cfg(debug_assertions)]
    {
        if std::env::var("AGENT_FAULT_AT").is_ok_and(|v| v == name) {
            kill_self();
        }
        if std::env::var("AGENT_FAULT_WAIT_AT").is_ok_and(|v| v == name) {
            eprintln!("fault: waiting at {name}");
            loop {
                std::thread::sleep(std::time::Duration::from_secs(1));
            }
        }
    }
    #[cfg(not(debug_assertions))]
    let _ = name;
}

/// Whether a replace must not use the exchange (tests of the fallback).
pub(crate) fn exchange_disabled() -> bool {
    cfg!(debug_assertions) && std::env::var_os("AGENT_FAULT_NO_EXCHANGE").is_some()
}

#[cfg(debug_assertions)]
fn kill_self() -> ! {
    #[cfg(unix)]
    {
        use rustix::process::{Signal, getpid, kill_process};
        let _ = kill_process(getpid(), Signal::KILL);
    }
    std::process::abort()
}
