//! A tool's diff, drawn: the [`DiffLine`]s of an approval request's
//! [`agent_protocol::ToolPreview::Diff`] (computed by the agent from the
//! tool's input before it runs) with old and new line numbers and colours.

use agent_protocol::DiffLine;
use ratatui::text::{Line, Span};

use crate::theme::{Role, Theme};

/// The diff as coloured lines: old and new line numbers, a sign, the text.
pub fn render_diff(
    path: &str,
    new_file: bool,
    lines: &[DiffLine],
    theme: Theme,
) -> Vec<Line<'static>> {
    let digits = lines
        .iter()
        .map(|l| match l {
            DiffLine::Same(a, b, _) => (*a).max(*b),
            DiffLine::Removed(a, _) | DiffLine::Added(a, _) => *a,
            DiffLine::Hunk(_) => 0,
        })
        .max()
        .unwrap_or(0)
        .to_string()
        .len();
    let num = |n: Option<usize>| match n {
        Some(n) => format!("{n:>digits$}"),
        None => " ".repeat(digits),
    };
    let mut out = vec![
        Line::from(Span::styled(
            if new_file {
                "--- /dev/null".to_string()
            } else {
                format!("--- a/{path}")
            },
            theme.style(Role::Removed),
        )),
        Line::from(Span::styled(
            format!("+++ b/{path}"),
            theme.style(Role::Added),
        )),
    ];
    if lines.is_empty() {
        out.push(Line::from(Span::styled(
            "(no change)",
            theme.style(Role::Dim),
        )));
    }
    for l in lines {
        let (old, new, sign, text, role) = match l {
            DiffLine::Hunk(h) => {
                out.push(Line::from(Span::styled(h.clone(), theme.style(Role::Hunk))));
                continue;
            }
            DiffLine::Same(a, b, t) => (Some(*a), Some(*b), ' ', t, Role::Text),
            DiffLine::Removed(a, t) => (Some(*a), None, '-', t, Role::Removed),
            DiffLine::Added(b, t) => (None, Some(*b), '+', t, Role::Added),
        };
        out.push(Line::from(vec![
            Span::styled(
                format!("{} {} │", num(old), num(new)),
                theme.style(Role::Dim),
            ),
            Span::styled(
                format!("{sign}{}", text.replace('\t', "    ")),
                theme.style(role),
            ),
        ]));
    }
    out
}
