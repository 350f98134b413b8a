//! Markdown as terminal lines: headings, lists, quotes, rules, inline code,
//! bold and italics, and fenced code blocks highlighted by [`crate::highlight`].
//! It renders whatever has streamed so far: an unclosed fence is a code block
//! still growing.

use ratatui::style::Modifier;
use ratatui::text::{Line, Span};
use unicode_width::UnicodeWidthStr;

use crate::highlight::{highlight, language_for_fence};
use crate::theme::{Role, Theme};

/// Renders `text` as lines for a transcript `width` columns wide (code
/// blocks and rules use it; wrapping is [`wrap`]'s job).
pub fn render(text: &str, width: u16, theme: Theme) -> Vec<Line<'static>> {
    let mut out = Vec::new();
    let mut lines = text.split('\n').peekable();
    while let Some(line) = lines.next() {
        let trimmed = line.trim_start();
        if let Some(info) = trimmed.strip_prefix("```") {
            let fence_indent = line.len() - trimmed.len();
            let mut code = String::new();
            for l in lines.by_ref() {
                if l.trim_start().starts_with("```") {
                    break;
                }
                code.push_str(l.get(fence_indent.min(indent_of(l))..).unwrap_or(l));
                code.push('\n');
            }
            code_block(&mut out, info.trim(), &code, width, theme);
            continue;
        }
        out.push(block_line(line, width, theme));
    }
    while out.last().is_some_and(|l| l.width() == 0) {
        out.pop();
    }
    out
}

fn indent_of(l: &str) -> usize {
    l.len() - l.trim_start().len()
}

fn code_block(out: &mut Vec<Line<'static>>, info: &str, code: &str, width: u16, theme: Theme) {
    let language = language_for_fence(info);
    let label = if info.is_empty() { "code" } else { info };
    let rule = usize::from(width).saturating_sub(label.width() + 4);
    out.push(Line::from(vec![
        Span::styled("╭─ ", theme.style(Role::Dim)),
        Span::styled(label.to_string(), theme.style(Role::Dim)),
        Span::styled(format!(" {}", "─".repeat(rule)), theme.style(Role::Dim)),
    ]));
    for l in highlight(language, code, theme) {
        let mut spans = vec![Span::styled("│ ", theme.style(Role::Dim))];
        spans.extend(l.spans);
        out.push(Line::from(spans));
    }
    out.push(Line::from(Span::styled(
        format!(
            "╰{}",
            "─".repeat(usize::from(width).saturating_sub(1).min(40))
        ),
        theme.style(Role::Dim),
    )));
}

fn block_line(line: &str, width: u16, theme: Theme) -> Line<'static> {
    let trimmed = line.trim_start();
    let indent = &line[..line.len() - trimmed.len()];
    let hashes = trimmed.chars().take_while(|c| *c == '#').count();
    if (1..=6).contains(&hashes) && trimmed[hashes..].starts_with(' ') {
        let mut spans = inline(trimmed[hashes + 1..].trim(), theme);
        for s in &mut spans {
            s.style = s.style.patch(theme.style(Role::Heading));
        }
        return Line::from(spans);
    }
    if ["---", "***", "___"].contains(&trimmed.trim_end()) {
        return Line::from(Span::styled(
            "─".repeat(usize::from(width).min(60)),
            theme.style(Role::Dim),
        ));
    }
    if let Some(rest) = trimmed.strip_prefix("> ") {
        let mut spans = vec![Span::styled("▌ ", theme.style(Role::Dim))];
        spans.extend(inline(rest, theme).into_iter().map(|mut s| {
            s.style = s.style.add_modifier(Modifier::ITALIC);
            s
        }));
        return Line::from(spans);
    }
    for bullet in ["- ", "* ", "+ "] {
        if let Some(rest) = trimmed.strip_prefix(bullet) {
            let mut spans = vec![Span::raw(format!("{indent}• "))];
            spans.extend(inline(rest, theme));
            return Line::from(spans);
        }
    }
    let digits = trimmed.chars().take_while(char::is_ascii_digit).count();
    if digits > 0 && trimmed[digits..].starts_with(". ") {
        let mut spans = vec![Span::raw(format!("{indent}{}. ", &trimmed[..digits]))];
        spans.extend(inline(&trimmed[digits + 2..], theme));
        return Line::from(spans);
    }
    let mut spans = Vec::new();
    if !indent.is_empty() {
        spans.push(Span::raw(indent.to_string()));
    }
    spans.extend(inline(trimmed, theme));
    Line::from(spans)
}

/// Inline Markdown: `code`, **bold**, *italic* / _italic_.
pub fn inline(text: &str, theme: Theme) -> Vec<Span<'static>> {
    let mut spans = Vec::new();
    let mut plain = String::new();
    let mut rest = text;
    let flush = |plain: &mut String, spans: &mut Vec<Span<'static>>| {
        if !plain.is_empty() {
            spans.push(Span::styled(std::mem::take(plain), theme.style(Role::Text)));
        }
    };
    while let Some(ch) = rest.chars().next() {
        if ch == '`'
            && let Some(end) = rest[1..].find('`')
        {
            flush(&mut plain, &mut spans);
            spans.push(Span::styled(
                rest[1..1 + end].to_string(),
                theme.style(Role::Code),
            ));
            rest = &rest[end + 2..];
            continue;
        }
        if (rest.starts_with("**") || rest.starts_with("__"))
            && let Some(end) = rest[2..].find(&rest[..2])
            && end > 0
        {
            flush(&mut plain, &mut spans);
            spans.extend(inline(&rest[2..2 + end], theme).into_iter().map(|mut s| {
                s.style = s.style.add_modifier(Modifier::BOLD);
                s
            }));
            rest = &rest[end + 4..];
            continue;
        }
        if (ch == '*' || ch == '_')
            && rest[1..].starts_with(|c: char| !c.is_whitespace())
            && let Some(end) = rest[1..].find(ch)
            && end > 0
            && (ch == '*' || plain.is_empty() || plain.ends_with(' '))
        {
            flush(&mut plain, &mut spans);
            spans.push(Span::styled(
                rest[1..1 + end].to_string(),
                theme.style(Role::Text).add_modifier(Modifier::ITALIC),
            ));
            rest = &rest[end + 2..];
            continue;
        }
        plain.push(ch);
        rest = &rest[ch.len_utf8()..];
    }
    flush(&mut plain, &mut spans);
    spans
}

/// Wraps `lines` to `width` columns, breaking at the last space that fits
/// (or mid-word when a word is longer than a line). Styles are kept.
pub fn wrap(lines: Vec<Line<'static>>, width: u16) -> Vec<Line<'static>> {
    let width = usize::from(width.max(1));
    let mut out = Vec::with_capacity(lines.len());
    for line in lines {
        if line.width() <= width {
            out.push(line);
            continue;
        }
        let line_style = line.style;
        let cells: Vec<(char, ratatui::style::Style)> = line
            .spans
            .iter()
            .flat_map(|s| s.content.chars().map(move |c| (c, s.style)))
            .collect();
        let mut start = 0;
        while start < cells.len() {
            let mut cols = 0;
            let mut end = start;
            let mut last_space = None;
            while end < cells.len() {
                let w = unicode_width::UnicodeWidthChar::width(cells[end].0).unwrap_or(0);
                if cols + w > width {
                    break;
                }
                if cells[end].0 == ' ' {
                    last_space = Some(end);
                }
                cols += w;
                end += 1;
            }
            if end == start {
                end = start + 1;
            } else if end < cells.len()
                && let Some(sp) = last_space
                && sp > start
            {
                end = sp + 1;
            }
            let mut piece = Line::from(group(&cells[start..end]));
            piece.style = line_style;
            out.push(piece);
            start = end;
        }
    }
    out
}

fn group(cells: &[(char, ratatui::style::Style)]) -> Vec<Span<'static>> {
    let mut spans: Vec<Span<'static>> = Vec::new();
    for (c, style) in cells {
        match spans.last_mut() {
            Some(last) if last.style == *style => last.content.to_mut().push(*c),
            _ => spans.push(Span::styled(c.to_string(), *style)),
        }
    }
    spans
}

#[cfg(test)]
mod tests {
    use super::*;

    fn plain(lines: &[Line<'_>]) -> Vec<String> {
        lines.iter().map(|l| l.to_string()).collect()
    }

    #[test]
    fn fences_become_framed_code_and_inline_marks_disappear() {
        let t = Theme { color: false };
        let lines = render(
            "# Title\nUse **bold** and `x`.\n```rust\nfn a() {}\n```\n- item",
            30,
            t,
        );
        assert_eq!(
            plain(&lines),
            vec![
                "Title",
                "Use bold and x.",
                "╭─ rust ──────────────────────",
                "│ fn a() {}",
                "╰─────────────────────────────",
                "• item"
            ]
        );
    }

    #[test]
    fn an_unclosed_fence_is_a_growing_code_block() {
        let lines = render("```py\nx = 1\n", 20, Theme { color: false });
        assert_eq!(lines[1].to_string(), "│ x = 1");
    }

    #[test]
    fn wrap_breaks_at_spaces_and_splits_long_words() {
        let lines = wrap(vec![Line::from("aaa bbb ccc"), Line::from("xxxxxxxxxx")], 7);
        assert_eq!(plain(&lines), vec!["aaa ", "bbb ccc", "xxxxxxx", "xxx"]);
    }
}
