//! The wiki generator's pipeline (`agent wiki`, docs/wiki.md), without the
//! model: the host asks the model in between and hands its checked answers
//! back as [`pages::Prose`].
//!
//! 1. [`scan`]: every file through tree-sitter — definitions, signatures,
//!    doc comments, imports, entry points, tests.
//! 2. [`modules`]: the project's modules from its own structure, each file
//!    classified; [`graph`]: the module graph from the real imports;
//!    [`project`] runs both over a directory.
//! 3. (the host: model summaries and synthesis, checked against 1–2.)
//! 4. [`diagrams`]: Mermaid, DOT or D2, drawn from the graph only.
//! 5. [`pages`]: Appendix D's pages.
//! 6. [`formats`]: raw Markdown, MkDocs, Hugo or Docusaurus;
//!    [`state`]: the incremental state and the model-answer cache.

pub mod answer;
pub mod classifiers;
pub mod diagrams;
pub mod formats;
pub mod graph;
pub mod modules;
pub mod pages;
pub mod project;
pub mod scan;
pub mod state;

pub use agent_config::{DiagramFormat, WikiDepth, WikiFormat};
