//! `xcode-log`: the build-log parser of the `apple-dev` skill (FR-6.6).
//!
//! It reads what `xcodebuild`, `swift build` and `swift test` print —
//! compiler errors, warnings and notes (Swift and Clang, with their source
//! excerpt), linker errors with the symbol, code-signing and provisioning
//! errors, Run Script phase failures, `** BUILD FAILED **`-style outcomes
//! and "The following build commands failed:", XCTest (serial, Linux and
//! parallel clones), Swift Testing, crashes during tests — and
//! `xcresulttool`'s JSON. Out come findings in the spec's Unified Finding
//! Schema (Appendix C), test results, a summary, and JUnit XML.
//!
//! - [`Parser`]: streaming, one line in, [`Event`]s out; colour codes
//!   stripped, invalid UTF-8 replaced, constant memory.
//! - [`Events`]: the events of a `BufRead`, as an iterator.
//! - [`parse_reader`] / [`parse_str`]: a whole log into a [`Report`].
//! - [`junit`]: test results as JUnit XML.
//! - [`xcresult`]: `xcresulttool get … --format json` output into a [`Report`].
//!
//! Pure Rust with no platform code: it builds for the host and for
//! `wasm32-wasip2` (the `apple-dev` component links it).
//!
//! ```
//! let log = "/src/App/View.swift:3:9: error: cannot find 'foo' in scope\n** BUILD FAILED **\n";
//! let report = xcode_log::parse_str(log, xcode_log::Options::default());
//! assert_eq!(report.summary.errors, 1);
//! assert_eq!(report.findings[0].location.start_line, 3);
//! assert_eq!(report.summary.build.as_deref(), Some("failed"));
//! ```
#![deny(missing_docs)]

pub mod event;
pub mod finding;
pub mod junit;
mod linker;
mod parser;
mod reader;
mod report;
pub mod scan;
pub mod testlines;
mod words;
pub mod xcresult;

pub use event::{
    Diagnostic, Event, Framework, Kind, Level, Outcome, RunCount, TestFailure, TestResult,
    TestStatus,
};
pub use finding::{Confidence, Finding, Location, Severity};
pub use parser::{MAX_CONTEXT, Parser};
pub use reader::{Events, LineReader, MAX_LINE, for_each_line, parse_reader, parse_str};
pub use report::{Options, Report, SCANNER, Summary, to_finding};
