//! Modules without tests, and the testing page.

use std::fmt::Write;
use std::path::{Component, Path, PathBuf};

use crate::{Outcome, TestCase, TestReport};

/// The names of `modules` (name, path relative to the project) that no test
/// case is attributed to. A case belongs to a module when its file is under
/// the module's path (an absolute file matches on any trailing part of it),
/// or when its name starts with the module's name followed by `::`, `/` or
/// `.` — or, for go's `package/Test` names, when the package path ends with
/// the module's name or path.
pub fn gaps(report: &TestReport, modules: &[(String, PathBuf)]) -> Vec<String> {
    let cases: Vec<&TestCase> = report.runs.iter().flat_map(|run| &run.cases).collect();
    modules
        .iter()
        .filter(|(name, path)| !cases.iter().any(|case| belongs(case, name, path)))
        .map(|(name, _)| name.clone())
        .collect()
}

fn belongs(case: &TestCase, name: &str, path: &Path) -> bool {
    if let Some(file) = &case.file
        && under(file, path)
    {
        return true;
    }
    if !name.is_empty()
        && ["::", "/", "."]
            .iter()
            .any(|separator| case.name.starts_with(&format!("{name}{separator}")))
    {
        return true;
    }
    // go: `example.com/mod/pkg/TestX` — the package is everything before the
    // last `/`.
    if let Some((package, _)) = case.name.rsplit_once('/') {
        let path = path.to_string_lossy();
        let path = path.trim_end_matches('/');
        return (!name.is_empty() && (package == name || package.ends_with(&format!("/{name}"))))
            || (!path.is_empty() && (package == path || package.ends_with(&format!("/{path}"))));
    }
    false
}

/// `file` is under `module`: directly, or — for an absolute `file` — some
/// trailing run of its components starts with `module`.
fn under(file: &Path, module: &Path) -> bool {
    let module: Vec<Component> = module
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if module.is_empty() {
        return false;
    }
    let parts: Vec<Component> = file
        .components()
        .filter(|c| !matches!(c, Component::CurDir))
        .collect();
    if file.is_absolute() {
        (0..parts.len()).any(|start| parts[start..].starts_with(&module))
    } else {
        parts.starts_with(&module)
    }
}

/// The testing page: a table of counts per runner, every failure with its
/// message, and the modules without tests.
pub fn render_markdown(report: &TestReport, gaps: &[String]) -> String {
    let mut page = String::from("# Testing\n\n");
    if report.runs.is_empty() {
        page.push_str("No test runner was found in this project.\n\n");
    } else {
        page.push_str("| Runner | Passed | Failed | Skipped |\n|---|---:|---:|---:|\n");
        for run in &report.runs {
            let totals = run.totals;
            let _ = writeln!(
                page,
                "| {} | {} | {} | {} |",
                run.runner.name(),
                totals.passed,
                totals.failed,
                totals.skipped
            );
        }
        page.push('\n');
    }
    for run in &report.runs {
        let failures: Vec<&TestCase> = run
            .cases
            .iter()
            .filter(|case| case.outcome == Outcome::Failed)
            .collect();
        if failures.is_empty() {
            continue;
        }
        let _ = writeln!(page, "## Failures ({})\n", run.runner.name());
        for case in failures {
            let _ = write!(page, "### `{}`", case.name.replace('`', "'"));
            if let Some(file) = &case.file {
                let _ = write!(page, " ({})", file.display());
            }
            page.push_str("\n\n");
            match &case.message {
                Some(message) => {
                    let fence = if message.contains("```") {
                        "~~~~"
                    } else {
                        "```"
                    };
                    let _ = writeln!(page, "{fence}text\n{}\n{fence}\n", message.trim_end());
                }
                None => page.push_str("The runner reported no message.\n\n"),
            }
        }
    }
    page.push_str("## Modules without tests\n\n");
    if gaps.is_empty() {
        page.push_str("Every module has at least one test attributed to it.\n");
    } else {
        for module in gaps {
            let _ = writeln!(page, "- `{}`", module.replace('`', "'"));
        }
    }
    page
}
