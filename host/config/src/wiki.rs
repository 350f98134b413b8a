//! `[wiki]`: the defaults of `agent wiki` (each overridden by its flag).

use std::path::PathBuf;

use crate::{ConfigError, Ctx, Key, Val};

/// A closed set of names read from the config and from a flag.
macro_rules! names {
    ($(#[$doc:meta])* $name:ident { $($(#[$vdoc:meta])* $variant:ident = $text:literal),+ $(,)? }) => {
        $(#[$doc])*
        #[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
        pub enum $name {
            $($(#[$vdoc])* $variant),+
        }

        impl $name {
            /// Every accepted name.
            pub const NAMES: &'static [&'static str] = &[$($text),+];

            /// The value a name stands for.
            pub fn parse(s: &str) -> Option<$name> {
                match s.trim() {
                    $($text => Some($name::$variant),)+
                    _ => None,
                }
            }

            /// Its name.
            pub fn as_str(self) -> &'static str {
                match self {
                    $($name::$variant => $text),+
                }
            }
        }
    };
}

names! {
    /// `wiki.format`: the layout the pages are written in.
    WikiFormat {
        /// Markdown files only.
        RawMd = "raw-md",
        /// `mkdocs.yml` and a `docs/` tree.
        Mkdocs = "mkdocs",
        /// A Hugo site: `hugo.toml` and `content/` with front matter.
        Hugo = "hugo",
        /// Docusaurus: `docs/` with front matter and `sidebars.js`.
        Docusaurus = "docusaurus",
    }
}

names! {
    /// `wiki.diagrams`: the diagram language.
    DiagramFormat {
        /// Mermaid blocks in the Markdown.
        Mermaid = "mermaid",
        /// D2 blocks.
        D2 = "d2",
        /// Graphviz DOT blocks.
        Dot = "dot",
    }
}

names! {
    /// `wiki.depth`: how much the model is asked.
    WikiDepth {
        /// Per-module summaries only.
        Quick = "quick",
        /// Summaries, then the synthesis pages.
        Standard = "standard",
        /// Summaries, synthesis, then a deep-dive per central module.
        Deep = "deep",
    }
}

/// `[wiki]`.
#[derive(Debug, Clone, PartialEq)]
pub struct WikiConfig {
    /// `format`.
    pub format: WikiFormat,
    /// `diagrams`.
    pub diagrams: DiagramFormat,
    /// `depth`.
    pub depth: WikiDepth,
    /// `output`: the wiki's directory, relative to the project.
    pub output: PathBuf,
    /// `max_llm_calls`: model requests one generation may make.
    pub max_llm_calls: u32,
}

impl Default for WikiConfig {
    fn default() -> Self {
        WikiConfig {
            format: WikiFormat::RawMd,
            diagrams: DiagramFormat::Mermaid,
            depth: WikiDepth::Standard,
            output: PathBuf::from("docs/wiki"),
            max_llm_calls: 60,
        }
    }
}

impl Ctx<'_> {
    pub(crate) fn wiki(
        &self,
        out: &mut WikiConfig,
        key: &Key<'_>,
        value: &Val<'_>,
    ) -> Result<(), ConfigError> {
        const KEYS: &[&str] = &["format", "diagrams", "depth", "output", "max_llm_calls"];
        for (k, v) in self.table("wiki", key, value)? {
            let name: &str = k.get_ref();
            let path = format!("wiki.{name}");
            match name {
                "format" => {
                    out.format = self.choice(&path, v, WikiFormat::NAMES, WikiFormat::parse)?
                }
                "diagrams" => {
                    out.diagrams =
                        self.choice(&path, v, DiagramFormat::NAMES, DiagramFormat::parse)?
                }
                "depth" => out.depth = self.choice(&path, v, WikiDepth::NAMES, WikiDepth::parse)?,
                "output" => out.output = PathBuf::from(self.string(&path, v)?),
                "max_llm_calls" => out.max_llm_calls = self.u32(&path, v, 1)?,
                _ => return Err(self.unknown(&path, k, KEYS)),
            }
        }
        Ok(())
    }
}
