//! Colours, or none: `NO_COLOR` keeps only bold, italics, underline and reverse video.

use ratatui::style::{Color, Modifier, Style};

/// What a piece of text is, for its style.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// Ordinary text.
    Text,
    /// Secondary text: labels, hints, line numbers.
    Dim,
    /// The user's own messages.
    User,
    /// Headings in Markdown.
    Heading,
    /// Inline code and code blocks without highlighting.
    Code,
    /// Tool-call cells' titles.
    Tool,
    /// A success marker.
    Ok,
    /// An error or a denial.
    Error,
    /// A warning.
    Warning,
    /// Added diff lines.
    Added,
    /// Removed diff lines.
    Removed,
    /// Diff hunk headers.
    Hunk,
    /// Syntax: keywords.
    Keyword,
    /// Syntax: string literals.
    String,
    /// Syntax: comments.
    Comment,
    /// Syntax: numbers.
    Number,
    /// Syntax: functions.
    Function,
    /// Syntax: types.
    Type,
    /// Syntax: constants (`true`, `None`...).
    Constant,
    /// The status line.
    Status,
    /// The selected entry of a dialog or picker.
    Selected,
}

/// The styles of the interface.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Theme {
    /// Whether colours are used (false under `NO_COLOR`).
    pub color: bool,
}

impl Theme {
    /// Colours unless `NO_COLOR` is set to anything non-empty (no-color.org).
    pub fn from_env() -> Theme {
        Theme {
            color: std::env::var_os("NO_COLOR").is_none_or(|v| v.is_empty()),
        }
    }

    /// The style of `role`.
    pub fn style(self, role: Role) -> Style {
        let s = Style::default();
        let bold = Modifier::BOLD;
        if !self.color {
            return match role {
                Role::Heading | Role::Tool | Role::User => s.add_modifier(bold),
                Role::Error => s.add_modifier(bold),
                Role::Dim | Role::Comment => s.add_modifier(Modifier::DIM),
                Role::Status | Role::Selected => s.add_modifier(Modifier::REVERSED),
                Role::Keyword => s.add_modifier(bold),
                _ => s,
            };
        }
        match role {
            Role::Text => s,
            Role::Dim => s.fg(Color::DarkGray),
            Role::User => s.fg(Color::Cyan).add_modifier(bold),
            Role::Heading => s.fg(Color::Magenta).add_modifier(bold),
            Role::Code => s.fg(Color::Yellow),
            Role::Tool => s.fg(Color::Blue).add_modifier(bold),
            Role::Ok => s.fg(Color::Green),
            Role::Error => s.fg(Color::Red).add_modifier(bold),
            Role::Warning => s.fg(Color::Yellow),
            Role::Added => s.fg(Color::Green),
            Role::Removed => s.fg(Color::Red),
            Role::Hunk => s.fg(Color::Cyan),
            Role::Keyword => s.fg(Color::Magenta),
            Role::String => s.fg(Color::Green),
            Role::Comment => s.fg(Color::DarkGray).add_modifier(Modifier::ITALIC),
            Role::Number => s.fg(Color::LightYellow),
            Role::Function => s.fg(Color::Blue),
            Role::Type => s.fg(Color::Cyan),
            Role::Constant => s.fg(Color::LightRed),
            Role::Status => s.fg(Color::Black).bg(Color::Gray),
            Role::Selected => s.fg(Color::Black).bg(Color::Cyan),
        }
    }
}
