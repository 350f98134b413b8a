//! The multi-line prompt editor: cursor movement, paste, and history
//! (Up on the first line and Down on the last walk through earlier prompts).

use unicode_width::UnicodeWidthStr;

/// The editor's text, cursor and history.
#[derive(Debug, Clone)]
pub struct Editor {
    lines: Vec<String>,
    row: usize,
    /// The cursor's column, in characters.
    col: usize,
    history: Vec<String>,
    /// Index into `history` while browsing it.
    browsing: Option<usize>,
    /// What was being typed before browsing started.
    draft: String,
}

impl Default for Editor {
    fn default() -> Self {
        Editor {
            lines: vec![String::new()],
            row: 0,
            col: 0,
            history: Vec::new(),
            browsing: None,
            draft: String::new(),
        }
    }
}

fn byte_at(s: &str, col: usize) -> usize {
    s.char_indices().nth(col).map_or(s.len(), |(i, _)| i)
}

impl Editor {
    /// The text.
    pub fn text(&self) -> String {
        self.lines.join("\n")
    }

    /// The lines.
    pub fn lines(&self) -> &[String] {
        &self.lines
    }

    /// Whether nothing is typed.
    pub fn is_empty(&self) -> bool {
        self.lines.len() == 1 && self.lines[0].is_empty()
    }

    /// The cursor: line and display column.
    pub fn cursor(&self) -> (usize, usize) {
        let line = &self.lines[self.row];
        (self.row, line[..byte_at(line, self.col)].width())
    }

    /// Replaces the text, cursor at its end.
    pub fn set_text(&mut self, text: &str) {
        self.lines = text.split('\n').map(str::to_string).collect();
        self.row = self.lines.len() - 1;
        self.col = self.lines[self.row].chars().count();
    }

    /// Inserts a character at the cursor.
    pub fn insert(&mut self, c: char) {
        if c == '\n' {
            return self.newline();
        }
        let line = &mut self.lines[self.row];
        line.insert(byte_at(line, self.col), c);
        self.col += 1;
    }

    /// Inserts pasted text (line breaks kept, `\r\n` and tabs normalised).
    pub fn insert_str(&mut self, text: &str) {
        for c in text.replace("\r\n", "\n").replace('\r', "\n").chars() {
            match c {
                '\t' => {
                    for _ in 0..4 {
                        self.insert(' ');
                    }
                }
                c if c == '\n' || !c.is_control() => self.insert(c),
                _ => {}
            }
        }
    }

    /// Splits the line at the cursor.
    pub fn newline(&mut self) {
        let line = &mut self.lines[self.row];
        let rest = line.split_off(byte_at(line, self.col));
        self.row += 1;
        self.lines.insert(self.row, rest);
        self.col = 0;
    }

    /// Deletes the character before the cursor (joining lines at a line start).
    pub fn backspace(&mut self) {
        if self.col > 0 {
            let line = &mut self.lines[self.row];
            let at = byte_at(line, self.col - 1);
            line.remove(at);
            self.col -= 1;
        } else if self.row > 0 {
            let line = self.lines.remove(self.row);
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
            self.lines[self.row].push_str(&line);
        }
    }

    /// Deletes the character under the cursor.
    pub fn delete(&mut self) {
        let len = self.lines[self.row].chars().count();
        if self.col < len {
            let line = &mut self.lines[self.row];
            let at = byte_at(line, self.col);
            line.remove(at);
        } else if self.row + 1 < self.lines.len() {
            let next = self.lines.remove(self.row + 1);
            self.lines[self.row].push_str(&next);
        }
    }

    /// Moves left.
    pub fn left(&mut self) {
        if self.col > 0 {
            self.col -= 1;
        } else if self.row > 0 {
            self.row -= 1;
            self.col = self.lines[self.row].chars().count();
        }
    }

    /// Moves right.
    pub fn right(&mut self) {
        if self.col < self.lines[self.row].chars().count() {
            self.col += 1;
        } else if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = 0;
        }
    }

    /// To the line's start.
    pub fn home(&mut self) {
        self.col = 0;
    }

    /// To the line's end.
    pub fn end(&mut self) {
        self.col = self.lines[self.row].chars().count();
    }

    /// Up a line, or to the previous prompt of the history on the first line.
    pub fn up(&mut self) {
        if self.row > 0 {
            self.row -= 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
            return;
        }
        let next = match self.browsing {
            None if !self.history.is_empty() => {
                self.draft = self.text();
                self.history.len() - 1
            }
            Some(i) if i > 0 => i - 1,
            _ => return,
        };
        self.browsing = Some(next);
        let text = self.history[next].clone();
        self.set_text(&text);
    }

    /// Down a line, or to the next prompt of the history on the last line.
    pub fn down(&mut self) {
        if self.row + 1 < self.lines.len() {
            self.row += 1;
            self.col = self.col.min(self.lines[self.row].chars().count());
            return;
        }
        match self.browsing {
            Some(i) if i + 1 < self.history.len() => {
                self.browsing = Some(i + 1);
                let text = self.history[i + 1].clone();
                self.set_text(&text);
            }
            Some(_) => {
                self.browsing = None;
                let draft = std::mem::take(&mut self.draft);
                self.set_text(&draft);
            }
            None => {}
        }
    }

    /// Takes the text out (for sending), remembering it in the history.
    pub fn take(&mut self) -> String {
        let text = self.text();
        if !text.trim().is_empty() && self.history.last() != Some(&text) {
            self.history.push(text.clone());
        }
        *self = Editor {
            history: std::mem::take(&mut self.history),
            ..Editor::default()
        };
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multi_line_editing_paste_and_history() {
        let mut e = Editor::default();
        e.insert_str("ab\r\ncd");
        assert_eq!(e.text(), "ab\ncd");
        e.home();
        e.backspace();
        assert_eq!(e.text(), "abcd");
        assert_eq!(e.cursor(), (0, 2));
        assert_eq!(e.take(), "abcd");
        e.insert_str("second");
        e.take();
        e.insert('x');
        e.up();
        assert_eq!(e.text(), "second");
        e.up();
        assert_eq!(e.text(), "abcd");
        e.down();
        e.down();
        assert_eq!(e.text(), "x");
    }
}
