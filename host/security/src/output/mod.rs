//! Report writers: SARIF 2.1.0, JSON, Markdown, GitHub workflow commands,
//! CycloneDX 1.6. Every writer sorts findings the same way (severity, file,
//! line, rule), so output is deterministic for a given report.

use std::io::{self, Write};
use std::str::FromStr;

use crate::engine::AuditReport;
use crate::finding::Finding;

pub mod cyclonedx;
pub mod github;
pub mod json;
pub mod markdown;
pub mod sarif;

/// An output format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Format {
    /// SARIF 2.1.0.
    Sarif,
    /// The report as JSON.
    Json,
    /// A Markdown report.
    Markdown,
    /// GitHub Actions workflow commands (annotations).
    Github,
    /// A CycloneDX 1.6 JSON SBOM.
    Cyclonedx,
}

impl Format {
    /// Every format's name.
    pub const NAMES: [&'static str; 5] = ["sarif", "json", "markdown", "github", "cyclonedx"];
}

impl FromStr for Format {
    type Err = String;
    fn from_str(s: &str) -> Result<Format, String> {
        match s.to_ascii_lowercase().as_str() {
            "sarif" => Ok(Format::Sarif),
            "json" => Ok(Format::Json),
            "markdown" | "md" => Ok(Format::Markdown),
            "github" => Ok(Format::Github),
            "cyclonedx" | "sbom" => Ok(Format::Cyclonedx),
            other => Err(format!(
                "unknown output format `{other}` (expected one of: {})",
                Format::NAMES.join(", ")
            )),
        }
    }
}

/// Writes `report` in `format`.
///
/// # Errors
/// I/O errors of `out`.
pub fn write(format: Format, out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    match format {
        Format::Sarif => sarif::write(out, report),
        Format::Json => json::write(out, report),
        Format::Markdown => markdown::write(out, report),
        Format::Github => github::write(out, report),
        Format::Cyclonedx => cyclonedx::write(out, report),
    }
}

/// Renders `report` in `format` to a string.
pub fn to_string(format: Format, report: &AuditReport) -> String {
    let mut buf = Vec::new();
    // Writing to a Vec cannot fail.
    let _ = write(format, &mut buf, report);
    String::from_utf8_lossy(&buf).into_owned()
}

/// The report's findings in report order.
pub(crate) fn sorted(report: &AuditReport) -> Vec<&Finding> {
    let mut refs: Vec<&Finding> = report.findings.iter().collect();
    refs.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    refs
}

pub(crate) fn json_out(out: &mut dyn Write, value: &serde_json::Value) -> io::Result<()> {
    serde_json::to_writer_pretty(&mut *out, value).map_err(io::Error::other)?;
    out.write_all(b"\n")
}
