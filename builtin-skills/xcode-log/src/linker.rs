//! ld's multi-line reports: `Undefined symbols for architecture arm64:`
//! with each `"_sym", referenced from:` and its referencing objects, and
//! `duplicate symbol '_x' in:` with the objects that define it — closed by
//! `ld: symbol(s) not found for architecture arm64` / `ld: N duplicate symbols`.

use crate::event::{Diagnostic, Kind, Level};
use crate::parser::MAX_CONTEXT_CHARS;
use crate::scan::shorten;
use crate::words::located;

/// Symbols kept from one block.
const MAX_SYMBOLS: usize = 256;
/// "referenced from" lines kept per symbol.
const MAX_REFERENCES: usize = 8;

/// One block being read.
#[derive(Debug, Default)]
pub(crate) struct LinkerBlock {
    duplicate: bool,
    arch: Option<String>,
    symbols: Vec<(String, Vec<String>)>,
}

/// What a line did to the block.
#[derive(Debug, PartialEq, Eq)]
pub(crate) enum Step {
    /// It belongs to the block.
    Taken,
    /// It closed the block (`ld: …`); when the block named no symbol, the
    /// `ld:` line itself is the error.
    Closed { empty_summary: Option<String> },
    /// It is not the block's: the block ended before it.
    NotMine,
}

impl LinkerBlock {
    /// A block that `line` opens, if it opens one.
    pub(crate) fn start(line: &str) -> Option<LinkerBlock> {
        if let Some(rest) = line.strip_prefix("Undefined symbols for architecture ") {
            let arch = rest.trim_end_matches(':').to_string();
            return Some(LinkerBlock {
                arch: Some(arch),
                ..LinkerBlock::default()
            });
        }
        let mut block = LinkerBlock {
            duplicate: true,
            ..LinkerBlock::default()
        };
        (block.line(line) == Step::Taken).then_some(block)
    }

    /// Reads the next line.
    pub(crate) fn line(&mut self, line: &str) -> Step {
        let t = line.trim();
        if !self.duplicate
            && let Some(sym) = t
                .strip_prefix('"')
                .and_then(|s| s.strip_suffix("\", referenced from:"))
        {
            self.add(sym);
            return Step::Taken;
        }
        if self.duplicate
            && let Some(rest) = line.strip_prefix("duplicate symbol ")
        {
            self.add(rest.trim_end_matches(" in:").trim_matches('\''));
            return Step::Taken;
        }
        if line.starts_with(char::is_whitespace) && !t.is_empty() && !self.symbols.is_empty() {
            if let Some((_, refs)) = self.symbols.last_mut()
                && refs.len() < MAX_REFERENCES
            {
                refs.push(shorten(t, MAX_CONTEXT_CHARS));
            }
            return Step::Taken;
        }
        if let Some(rest) = line.strip_prefix("ld: ")
            && (rest.starts_with("symbol(s) not found") || rest.contains("duplicate symbol"))
        {
            if let Some((_, arch)) = rest.rsplit_once("for architecture ") {
                self.arch = Some(arch.to_string());
            }
            let empty_summary = self.symbols.is_empty().then(|| rest.to_string());
            return Step::Closed { empty_summary };
        }
        Step::NotMine
    }

    fn add(&mut self, symbol: &str) {
        if self.symbols.len() < MAX_SYMBOLS {
            self.symbols.push((symbol.to_string(), Vec::new()));
        }
    }

    /// One linker error per symbol, its references as context.
    pub(crate) fn diagnostics(self) -> Vec<Diagnostic> {
        let arch = self.arch.unwrap_or_default();
        self.symbols
            .into_iter()
            .map(|(symbol, refs)| {
                let message = if self.duplicate {
                    format!("Duplicate symbol '{symbol}'")
                } else if arch.is_empty() {
                    format!("Undefined symbol \"{symbol}\"")
                } else {
                    format!("Undefined symbol \"{symbol}\" for architecture {arch}")
                };
                let mut d = located(Kind::Linker, Level::Error, "", 0, 0, &message);
                d.symbol = Some(symbol);
                d.arch = (!arch.is_empty()).then(|| arch.clone());
                d.context = refs;
                d
            })
            .collect()
    }
}
