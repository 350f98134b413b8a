//! GitHub Actions workflow commands: one annotation per finding
//! (`::error file=F,line=L,col=C,title=T::message`), `error` for critical
//! and high, `warning` for medium, `notice` for low and info.

use std::io::{self, Write};

use crate::engine::AuditReport;
use crate::finding::Severity;

/// Escapes a command's message (`%`, CR, LF).
pub fn escape_data(s: &str) -> String {
    s.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Escapes a command property value (also `:` and `,`).
pub fn escape_property(s: &str) -> String {
    escape_data(s).replace(':', "%3A").replace(',', "%2C")
}

/// The command for a severity.
pub fn command(s: Severity) -> &'static str {
    match s {
        Severity::Critical | Severity::High => "error",
        Severity::Medium => "warning",
        Severity::Low | Severity::Info => "notice",
    }
}

/// Writes one workflow command per finding, then one warning per scanner
/// error (an error per path that could not be read), then a warning with the
/// count of findings the caps cut.
///
/// # Errors
/// I/O errors.
pub fn write(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    let mut buffered = io::BufWriter::new(out);
    write_to(&mut buffered, report)?;
    buffered.flush()
}

fn write_to(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    for f in super::sorted(report) {
        let mut props = vec![format!("file={}", escape_property(&f.location.file))];
        if f.location.start_line >= 1 {
            props.push(format!("line={}", f.location.start_line));
            if f.location.end_line > f.location.start_line {
                props.push(format!("endLine={}", f.location.end_line));
            }
            if f.location.start_column >= 1 {
                props.push(format!("col={}", f.location.start_column));
                if f.location.end_column >= 1 && f.location.end_line == f.location.start_line {
                    props.push(format!("endColumn={}", f.location.end_column));
                }
            }
        }
        let title = format!("[{}] {} ({})", f.rule_id, f.title, f.severity);
        props.push(format!("title={}", escape_property(&title)));
        let mut message = if f.description.is_empty() {
            f.title.clone()
        } else {
            f.description.clone()
        };
        if let Some(cwe) = &f.cwe {
            message.push_str(&format!("\n{cwe}"));
        }
        if !f.remediation.is_empty() {
            message.push_str(&format!("\nRemediation: {}", f.remediation));
        }
        message.push_str(&format!("\nScanner: {}", f.scanner));
        writeln!(
            out,
            "::{} {}::{}",
            command(f.severity),
            props.join(","),
            escape_data(&message)
        )?;
    }
    for e in &report.errors {
        let mut props = String::new();
        if let Some(file) = &e.file {
            props = format!(" file={}", escape_property(file));
        }
        let (command, message) = if e.scanner == "walk" {
            ("error", format!("not audited: {}", e.message))
        } else {
            (
                "warning",
                format!("scanner {} failed: {}", e.scanner, e.message),
            )
        };
        writeln!(out, "::{command}{props}::{}", escape_data(&message))?;
    }
    if let Some(t) = report.truncated.summary() {
        writeln!(out, "::warning::{}", escape_data(&t))?;
    }
    if let Some(x) = crate::exclude::summary(&report.stats.excluded) {
        writeln!(out, "::notice::{}", escape_data(&x))?;
    }
    Ok(())
}
