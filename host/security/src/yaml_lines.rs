//! Where each field of a YAML document is: a map from field paths
//! (`rules[0].pattern.match`, the same spelling serde_path_to_error uses) to
//! 1-based lines and columns, for error messages.

use std::collections::HashMap;

use yaml_rust2::parser::{Event, MarkedEventReceiver, Parser};
use yaml_rust2::scanner::Marker;

/// Paths → (line, column), both 1-based.
#[derive(Debug, Default)]
pub(crate) struct LineIndex {
    map: HashMap<String, (usize, usize)>,
}

/// A YAML syntax error with its position.
#[derive(Debug)]
pub(crate) struct SyntaxError {
    pub line: usize,
    pub column: usize,
    pub message: String,
}

enum Frame {
    Map { key: Option<String> },
    Seq { index: usize },
}

#[derive(Default)]
struct Builder {
    stack: Vec<Frame>,
    map: HashMap<String, (usize, usize)>,
}

impl Builder {
    fn path(&self) -> String {
        let mut out = String::new();
        for f in &self.stack {
            match f {
                Frame::Map { key: Some(k) } => {
                    if !out.is_empty() {
                        out.push('.');
                    }
                    out.push_str(k);
                }
                Frame::Map { key: None } => {}
                Frame::Seq { index } => out.push_str(&format!("[{index}]")),
            }
        }
        out
    }

    /// Records the position of the node that starts now (a value).
    fn value_at(&mut self, mark: &Marker) {
        if let Some(Frame::Seq { .. }) = self.stack.last() {
            let p = self.path();
            self.map.entry(p).or_insert((mark.line(), mark.col() + 1));
        }
    }

    /// A value finished: advance the parent.
    fn value_done(&mut self) {
        match self.stack.last_mut() {
            Some(Frame::Map { key }) => *key = None,
            Some(Frame::Seq { index }) => *index += 1,
            None => {}
        }
    }
}

impl MarkedEventReceiver for Builder {
    fn on_event(&mut self, ev: Event, mark: Marker) {
        match ev {
            Event::Scalar(value, ..) => {
                if let Some(Frame::Map { key: None }) = self.stack.last() {
                    // A key.
                    if let Some(Frame::Map { key }) = self.stack.last_mut() {
                        *key = Some(value);
                    }
                    let p = self.path();
                    self.map.entry(p).or_insert((mark.line(), mark.col() + 1));
                } else {
                    self.value_at(&mark);
                    self.value_done();
                }
            }
            Event::Alias(_) => {
                self.value_at(&mark);
                self.value_done();
            }
            Event::MappingStart(..) => {
                self.value_at(&mark);
                self.stack.push(Frame::Map { key: None });
            }
            Event::SequenceStart(..) => {
                self.value_at(&mark);
                self.stack.push(Frame::Seq { index: 0 });
            }
            Event::MappingEnd | Event::SequenceEnd => {
                self.stack.pop();
                self.value_done();
            }
            _ => {}
        }
    }
}

impl LineIndex {
    /// Indexes `text`; a syntax error comes back with its position.
    pub fn build(text: &str) -> Result<LineIndex, SyntaxError> {
        let mut b = Builder::default();
        let mut parser = Parser::new_from_str(text);
        parser.load(&mut b, false).map_err(|e| SyntaxError {
            line: e.marker().line(),
            column: e.marker().col() + 1,
            message: e.info().to_string(),
        })?;
        Ok(LineIndex { map: b.map })
    }

    /// The position of `path`, or of its nearest indexed ancestor.
    pub fn find(&self, path: &str) -> Option<(usize, usize)> {
        let mut p = path.to_string();
        loop {
            if let Some(pos) = self.map.get(&p) {
                return Some(*pos);
            }
            let cut = p.rfind(['.', '['])?;
            p.truncate(cut);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn indexes_nested_paths() {
        let text = "rules:\n  - id: A\n    pattern:\n      type: regex\n      match: 'x'\n  - id: B\nci:\n  fail_on: high\n";
        let idx = LineIndex::build(text).unwrap();
        assert_eq!(idx.find("rules[0].id").unwrap().0, 2);
        assert_eq!(idx.find("rules[0].pattern.match").unwrap().0, 5);
        assert_eq!(idx.find("rules[1].id").unwrap().0, 6);
        assert_eq!(idx.find("rules[1]").unwrap().0, 6);
        assert_eq!(idx.find("ci.fail_on").unwrap().0, 8);
        assert_eq!(idx.find("rules[1].nothing").unwrap().0, 6);
    }
}
