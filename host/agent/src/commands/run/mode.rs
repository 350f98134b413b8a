//! `agent run --mode`: the headless modes `agent run` also spells (the
//! spec's `--mode=code-review`); each is its own command's run.

use clap::ValueEnum;

/// A mode of `agent run` besides a free prompt.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum RunMode {
    /// Review a change, as `agent review` does (`--diff A..B`, `--staged`, `--base BRANCH`).
    CodeReview,
}
