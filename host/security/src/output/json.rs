//! The report as JSON (findings sorted), written as it is serialized: no
//! copy of the report, no JSON tree of it in memory.

use std::io::{self, Write};

use serde::Serialize;

use crate::deps::DependencyVulnerability;
use crate::engine::{AuditReport, ScanError, ScannerInfo, Scope, Stats};
use crate::finding::Finding;
use crate::limits::Truncated;
use crate::post::{Thresholds, Verdict};
use crate::walk::Skipped;

/// [`AuditReport`] by reference, findings in report order (same fields: a
/// test checks that both serialize alike).
#[derive(Serialize)]
struct View<'a> {
    tool: &'a str,
    version: &'a str,
    root: &'a str,
    scope: &'a Scope,
    started_at: &'a str,
    findings: Vec<&'a Finding>,
    truncated: &'a Truncated,
    packages: &'a [agent_deps::Package],
    vulnerabilities: &'a [DependencyVulnerability],
    scanners: &'a [ScannerInfo],
    stats: &'a Stats,
    errors: &'a [ScanError],
    skipped: &'a [Skipped],
    thresholds: &'a Thresholds,
    verdict: &'a Verdict,
}

/// Writes the report as pretty JSON.
///
/// # Errors
/// I/O errors.
pub fn write(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    let r = report;
    let view = View {
        tool: &r.tool,
        version: &r.version,
        root: &r.root,
        scope: &r.scope,
        started_at: &r.started_at,
        findings: super::sorted(r),
        truncated: &r.truncated,
        packages: &r.packages,
        vulnerabilities: &r.vulnerabilities,
        scanners: &r.scanners,
        stats: &r.stats,
        errors: &r.errors,
        skipped: &r.skipped,
        thresholds: &r.thresholds,
        verdict: &r.verdict,
    };
    let mut buffered = io::BufWriter::new(out);
    serde_json::to_writer_pretty(&mut buffered, &view).map_err(io::Error::other)?;
    buffered.write_all(b"\n")?;
    buffered.flush()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_view_serializes_as_the_report() {
        let mut r = AuditReport::empty("/p");
        r.findings.push(Finding::new(
            "R",
            "rules",
            crate::Severity::Low,
            "c",
            "t",
            crate::Location::default(),
        ));
        r.truncated.findings = 3;
        let mut buf = Vec::new();
        write(&mut buf, &r).unwrap();
        let written: serde_json::Value = serde_json::from_slice(&buf).unwrap();
        assert_eq!(written, serde_json::to_value(&r).unwrap());
    }
}
