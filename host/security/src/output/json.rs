//! The report as JSON (findings sorted).

use std::io::{self, Write};

use crate::engine::AuditReport;

/// Writes the report as pretty JSON.
///
/// # Errors
/// I/O errors.
pub fn write(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    let mut r = report.clone();
    crate::finding::sort_findings(&mut r.findings);
    let value = serde_json::to_value(&r).map_err(io::Error::other)?;
    super::json_out(out, &value)
}
