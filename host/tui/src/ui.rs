//! Drawing: the transcript, the prompt editor, the status line, and the
//! dialogs on top. Works from 20×6 up; 80×24 is the design size.

use std::hash::{Hash, Hasher};

use agent_protocol::{ApprovalKind, ToolPreview};
use ratatui::Frame;
use ratatui::layout::{Constraint, Layout, Position, Rect};
use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use ratatui::widgets::{Block, Borders, Clear, Paragraph};
use unicode_width::UnicodeWidthStr;

use crate::app::{App, Modal};
use crate::diff::render_diff;
use crate::markdown::{self, wrap};
use crate::state::{Cell, NoticeKind, input_summary, result_summary};
use crate::theme::{Role, Theme};

/// Draws the whole interface.
pub fn draw(frame: &mut Frame<'_>, app: &mut App) {
    let area = frame.area();
    let input_rows = u16::try_from(app.editor.lines().len().min(6)).unwrap_or(6);
    let [body, input, status] = Layout::vertical([
        Constraint::Min(1),
        Constraint::Length(input_rows + 2),
        Constraint::Length(1),
    ])
    .areas(area);
    draw_transcript(frame, app, body);
    draw_input(frame, app, input);
    draw_status(frame, app, status);
    if let Some(ask) = app.asks.front() {
        let question = ask.kind.clone();
        draw_question(frame, app.theme, &question, app.choice, area);
    } else if let Some(modal) = &app.modal {
        draw_modal(frame, app.theme, modal, area);
    }
}

fn hash(text: &str) -> u64 {
    let mut h = std::collections::hash_map::DefaultHasher::new();
    text.hash(&mut h);
    h.finish()
}

/// The lines of one cell, `width` columns wide.
pub fn cell_lines(cell: &Cell, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let dim = theme.style(Role::Dim);
    let lines = match cell {
        Cell::User(text) => {
            let (typed, files) = split_attachments(text);
            let mut out: Vec<Line<'static>> = typed
                .lines()
                .enumerate()
                .map(|(i, l)| {
                    Line::from(vec![
                        Span::styled(if i == 0 { "› " } else { "  " }, theme.style(Role::User)),
                        Span::styled(l.to_string(), theme.style(Role::User)),
                    ])
                })
                .collect();
            for f in files {
                out.push(Line::from(Span::styled(format!("  @ {f} attached"), dim)));
            }
            out
        }
        Cell::Assistant(text) => markdown::render(text, width, theme),
        Cell::Tool(t) => {
            let name = if t.skill.is_empty() {
                t.tool.clone()
            } else {
                format!("{} · {}", t.skill, t.tool)
            };
            let (mark, role) = match (&t.result, &t.refused) {
                (_, Some(_)) => ("✗", Role::Error),
                (None, None) => ("…", Role::Dim),
                (Some((_, true)), _) => ("✗", Role::Error),
                (Some((_, false)), _) => ("✓", Role::Ok),
            };
            let mut out = vec![Line::from(vec![
                Span::styled(format!("{mark} "), theme.style(role)),
                Span::styled(name, theme.style(Role::Tool)),
                Span::styled(
                    format!("  {}", input_summary(&t.input)),
                    theme.style(Role::Code),
                ),
            ])];
            let detail = match (&t.refused, &t.result) {
                (Some(reason), _) => Some((format!("not approved: {reason}"), Role::Error)),
                (None, Some((output, is_error))) => Some((
                    result_summary(output),
                    if *is_error { Role::Error } else { Role::Dim },
                )),
                (None, None) => None,
            };
            if let Some((text, role)) = detail {
                out.push(Line::from(vec![
                    Span::styled("  └ ", dim),
                    Span::styled(text, theme.style(role)),
                ]));
            }
            out
        }
        Cell::Notice(kind, text) => {
            let role = match kind {
                NoticeKind::Info => Role::Dim,
                NoticeKind::Warning => Role::Warning,
                NoticeKind::Error => Role::Error,
            };
            vec![Line::from(Span::styled(
                format!("• {text}"),
                theme.style(role),
            ))]
        }
    };
    wrap(lines, width)
}

/// The typed part of a prompt and the paths of its `@path` attachments.
fn split_attachments(text: &str) -> (&str, Vec<String>) {
    let Some(at) = text.find("\n\n<file path=\"") else {
        return (text, Vec::new());
    };
    let files = text[at..]
        .split("<file path=\"")
        .skip(1)
        .filter_map(|s| s.split_once('"').map(|(p, _)| p.to_string()))
        .collect();
    (&text[..at], files)
}

fn draw_transcript(frame: &mut Frame<'_>, app: &mut App, area: Rect) {
    let width = area.width.saturating_sub(1).max(1);
    let mut lines: Vec<Line<'static>> = Vec::new();
    if app.transcript.cells.is_empty() {
        lines.push(Line::from(Span::styled(
            "agent — type a task and press Enter · /help for commands",
            app.theme.style(Role::Dim),
        )));
    }
    for (i, cell) in app.transcript.cells.iter().enumerate() {
        let key = match cell {
            Cell::Assistant(t) | Cell::User(t) => hash(t),
            other => hash(&format!("{other:?}")),
        };
        let rendered = match app.cache.get(&i) {
            Some((h, w, l)) if *h == key && *w == width => l.clone(),
            _ => {
                let l = cell_lines(cell, width, app.theme);
                app.cache.insert(i, (key, width, l.clone()));
                l
            }
        };
        if i > 0 {
            lines.push(Line::default());
        }
        lines.extend(rendered);
    }
    let height = usize::from(area.height);
    let max_scroll = lines.len().saturating_sub(height);
    app.scroll = app.scroll.min(max_scroll);
    let end = lines.len() - app.scroll;
    let start = end.saturating_sub(height);
    let visible: Vec<Line<'static>> = lines.drain(start..end).collect();
    frame.render_widget(
        Paragraph::new(visible),
        Rect {
            x: area.x,
            width,
            ..area
        },
    );
}

fn draw_input(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let theme = app.theme;
    let title = if app.transcript.running {
        " running · Esc cancels "
    } else {
        " prompt "
    };
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::Dim))
        .title(Span::styled(title, theme.style(Role::Dim)));
    let inner = block.inner(area);
    let (row, col) = app.editor.cursor();
    let rows = usize::from(inner.height.max(1));
    let first = row.saturating_sub(rows - 1);
    let cols = usize::from(inner.width.max(1));
    let shift = col.saturating_sub(cols - 1);
    let lines: Vec<Line<'static>> = app
        .editor
        .lines()
        .iter()
        .skip(first)
        .take(rows)
        .map(|l| Line::from(skip_columns(l, shift)))
        .collect();
    frame.render_widget(Paragraph::new(lines).block(block), area);
    if app.asks.is_empty() && app.modal.is_none() {
        frame.set_cursor_position(Position {
            x: inner.x + u16::try_from(col - shift).unwrap_or(0),
            y: inner.y + u16::try_from(row - first).unwrap_or(0),
        });
    }
}

fn skip_columns(s: &str, cols: usize) -> String {
    let mut skipped = 0;
    let mut out = String::new();
    for c in s.chars() {
        if skipped < cols {
            skipped += unicode_width::UnicodeWidthChar::width(c).unwrap_or(0);
        } else {
            out.push(c);
        }
    }
    out
}

fn tokens(n: u64) -> String {
    if n >= 10_000 {
        format!("{}k", n / 1000)
    } else if n >= 1000 {
        format!("{:.1}k", n as f64 / 1000.0)
    } else {
        n.to_string()
    }
}

/// The status line's text for a line `width` columns wide: the active
/// skills are counted instead of named when their names do not fit.
pub fn status_text(app: &App, width: usize) -> String {
    let t = &app.transcript;
    let mut parts = vec![
        app.model.clone(),
        format!("ctx {}/{}", tokens(t.context_tokens), tokens(app.budget)),
        format!("{} tok", tokens(t.total_tokens)),
    ];
    if !t.active_skills.is_empty() {
        parts.push(format!("skills: {}", t.active_skills.join(", ")));
    }
    let skills_at = parts.len() - 1;
    if !app.asks.is_empty() {
        parts.push(format!("{} approval(s) pending", app.asks.len()));
    }
    if t.running {
        parts.push("running".into());
    }
    let text = format!(" {}", parts.join(" · "));
    if text.width() + 7 > width && !t.active_skills.is_empty() {
        let n = t.active_skills.len();
        parts[skills_at] = format!("{n} skill{}", if n == 1 { "" } else { "s" });
        return format!(" {}", parts.join(" · "));
    }
    text
}

fn draw_status(frame: &mut Frame<'_>, app: &App, area: Rect) {
    let width = usize::from(area.width);
    let mut text = status_text(app, width);
    let help = " /help ";
    if text.width() + help.width() <= width {
        text.push_str(&" ".repeat(width - text.width() - help.width()));
        text.push_str(help);
    }
    frame.render_widget(
        Paragraph::new(Line::from(Span::styled(
            text,
            app.theme.style(Role::Status),
        ))),
        area,
    );
}

fn centered(area: Rect, width: u16, height: u16) -> Rect {
    let w = width.min(area.width);
    let h = height.min(area.height);
    Rect {
        x: area.x + (area.width - w) / 2,
        y: area.y + (area.height - h) / 2,
        width: w,
        height: h,
    }
}

fn buttons(labels: [&str; 3], choice: usize, theme: Theme) -> Line<'static> {
    let mut spans = Vec::new();
    for (i, l) in labels.iter().enumerate() {
        if i > 0 {
            spans.push(Span::raw("  "));
        }
        let style = if i == choice {
            theme.style(Role::Selected).add_modifier(Modifier::BOLD)
        } else {
            theme.style(Role::Text)
        };
        spans.push(Span::styled(format!("[ {l} ]"), style));
    }
    Line::from(spans)
}

fn field(label: &str, value: String, theme: Theme) -> Line<'static> {
    Line::from(vec![
        Span::styled(format!("{label:<12}"), theme.style(Role::Dim)),
        Span::styled(value, theme.style(Role::Text)),
    ])
}

/// The lines of a question's dialog, `width` columns inside its frame.
pub fn question_lines(
    q: &ApprovalKind,
    choice: usize,
    width: u16,
    max_body: usize,
    theme: Theme,
) -> (String, Vec<Line<'static>>) {
    match q {
        ApprovalKind::Permission {
            skill,
            permission,
            description,
            scope,
            detail,
        } => {
            let mut lines = vec![
                field("Skill", skill.clone(), theme),
                field(
                    "Permission",
                    if description.is_empty() {
                        permission.clone()
                    } else {
                        format!("{permission} — {description}")
                    },
                    theme,
                ),
                field(
                    "Scope",
                    scope.clone().unwrap_or_else(|| "any".into()),
                    theme,
                ),
                field("About to", detail.clone(), theme),
                Line::default(),
                Line::from(Span::styled(
                    "Allow always is saved; revoke with /permissions revoke.",
                    theme.style(Role::Dim),
                )),
                Line::default(),
                buttons(["Allow once", "Allow always", "Deny"], choice, theme),
                Line::from(Span::styled(
                    "o once · a always · d deny · ←/→ Enter",
                    theme.style(Role::Dim),
                )),
            ];
            lines = wrap(lines, width);
            (format!(" Permission requested by {skill} "), lines)
        }
        ApprovalKind::Tool {
            skill,
            tool,
            preview,
        } => {
            let mut body: Vec<Line<'static>> = match preview {
                ToolPreview::Diff {
                    path,
                    new_file,
                    lines,
                } => render_diff(path, *new_file, lines, theme),
                ToolPreview::Command { line } => vec![
                    Line::from(Span::styled("Command:", theme.style(Role::Dim))),
                    Line::from(Span::styled(format!("$ {line}"), theme.style(Role::Code))),
                ],
                ToolPreview::Problem { message } => vec![Line::from(Span::styled(
                    message.clone(),
                    theme.style(Role::Warning),
                ))],
                ToolPreview::Input { json } => {
                    json.lines().map(|l| Line::from(l.to_string())).collect()
                }
            };
            body = wrap(body, width);
            if body.len() > max_body {
                let more = body.len() - max_body + 1;
                body.truncate(max_body - 1);
                body.push(Line::from(Span::styled(
                    format!("… {more} more lines"),
                    theme.style(Role::Dim),
                )));
            }
            body.push(Line::default());
            body.push(buttons(
                ["Allow once", "Allow for session", "Deny"],
                choice,
                theme,
            ));
            body.push(Line::from(Span::styled(
                "o once · a this session · d deny",
                theme.style(Role::Dim),
            )));
            (format!(" {skill} wants to run {tool} "), body)
        }
    }
}

fn draw_question(frame: &mut Frame<'_>, theme: Theme, q: &ApprovalKind, choice: usize, area: Rect) {
    let width = area.width.saturating_sub(4).clamp(10, 90);
    let max_body = usize::from(area.height.saturating_sub(7)).max(3);
    let (title, lines) = question_lines(q, choice, width - 2, max_body, theme);
    let height = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2);
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::Warning))
        .title(Span::styled(title, theme.style(Role::Heading)));
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}

fn draw_modal(frame: &mut Frame<'_>, theme: Theme, modal: &Modal, area: Rect) {
    let width = area.width.saturating_sub(2).max(10);
    let (title, lines): (String, Vec<Line<'static>>) = match modal {
        Modal::Text {
            title,
            lines,
            scroll,
        } => (
            format!(" {title} · Esc closes "),
            wrap(
                lines.iter().map(|l| Line::from(l.clone())).collect(),
                width - 2,
            )
            .into_iter()
            .skip(*scroll)
            .collect(),
        ),
        Modal::Sessions { rows, selected } => (
            " Resume a session · ↑/↓ Enter · Esc closes ".to_string(),
            rows.iter()
                .enumerate()
                .map(|(i, r)| {
                    let style = if i == *selected {
                        theme.style(Role::Selected)
                    } else {
                        theme.style(Role::Text)
                    };
                    let id: String = r.id.chars().take(8).collect();
                    let when: String = r.updated.chars().take(16).collect();
                    Line::from(Span::styled(
                        format!("{id}  {when}  {:>3} turns  {}", r.turns, r.title),
                        style,
                    ))
                })
                .collect(),
        ),
    };
    let height = u16::try_from(lines.len())
        .unwrap_or(u16::MAX)
        .saturating_add(2)
        .min(area.height.saturating_sub(2));
    let rect = centered(area, width, height);
    frame.render_widget(Clear, rect);
    let block = Block::default()
        .borders(Borders::ALL)
        .border_style(theme.style(Role::Dim))
        .title(Span::styled(title, theme.style(Role::Heading)));
    frame.render_widget(Paragraph::new(lines).block(block), rect);
}
