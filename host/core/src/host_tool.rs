//! Tools the host provides itself, beside the components' tools: a mode's
//! reporting tool (`report_finding`), an MCP server's tools, an instruction
//! skill's `load_skill`. Each belongs to a skill by name (a built-in mode's
//! skill, `mcp:<server>`, an instruction skill), and the one
//! [`crate::router::ToolRouter`] routes its calls through the same steps as a
//! component's: constraints, `--tools`, hooks, schema, approval, events.
//! Only the call itself differs: [`HostTool::call`] instead of an instance
//! of a component. A host tool does what the host code behind it does, so a
//! source that reaches outside the process (starts a program, opens a
//! connection) checks the owning skill's grants itself before it does.
//!
//! A source's constraints and model are asked again during the turn (after each tool
//! call, before each request), so that what a tool call changed (an instruction skill
//! loaded by `load_skill`) applies to the rest of that turn. A [`Forker`] lets a source run
//! a sub-agent of the turn (an instruction skill with `context: fork`).
//!
//! A [`HostToolSource`] offers tools for each turn (it may start what it
//! needs lazily and offer nothing); the frontend's assembly hands sources to
//! the session ([`crate::SessionParts::host_tools`]).

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use agent_runtime::{SkillError, ToolOutput, ToolSpec};

/// A future a host tool or source returns.
pub type HostFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// One tool the host provides itself.
pub trait HostTool: Send + Sync {
    /// The skill it belongs to: the constraints, the approval gate, hooks
    /// and events name this skill.
    fn skill(&self) -> &str;

    /// Its name, description and input schema as the model sees them, and
    /// whether it asks for approval before it runs.
    fn spec(&self) -> &ToolSpec;

    /// Runs it with `input`, already checked against the schema and
    /// approved. An error is the tool's own, as the model reads it.
    fn call<'a>(&'a self, input: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>>;
}

/// What a source offers one turn.
#[derive(Default)]
pub struct HostOffer {
    /// The tools.
    pub tools: Vec<Arc<dyn HostTool>>,
    /// Text added to the end of the system prompt (how to use the tools).
    pub prompt: Option<String>,
    /// Problems the user should know of (a server that did not start),
    /// shown as warnings; the turn goes on.
    pub warnings: Vec<String>,
}

/// Offers host tools to each turn.
pub trait HostToolSource: Send + Sync {
    /// What it offers a turn whose user message is `message`.
    fn offer<'a>(&'a self, message: &'a str) -> HostFuture<'a, HostOffer>;

    /// Constraints its skills impose on the turn, asked after [`HostToolSource::offer`]
    /// (an instruction skill's `allowed_tools` once its body was loaded); merged with the
    /// active components' by agent-policy. Default: none.
    fn constraints(&self) -> Vec<agent_policy::SkillConstraint> {
        Vec::new()
    }

    /// The model the turn's next requests use instead of the session's, while one of its
    /// skills asks for one (an instruction skill's `model:`); asked before every request of
    /// the turn. Default: none.
    fn model(&self) -> Option<String> {
        None
    }

    /// Gives the source the running turn's [`Forker`], before [`HostToolSource::offer`]
    /// (each turn its own). Default: not used.
    fn bind_forker(&self, _forker: std::sync::Arc<dyn Forker>) {}
}

/// A fixed set of tools and an optional prompt, offered to every turn.
pub struct FixedTools {
    /// The tools.
    pub tools: Vec<Arc<dyn HostTool>>,
    /// Added to the system prompt.
    pub prompt: Option<String>,
}

impl HostToolSource for FixedTools {
    fn offer<'a>(&'a self, _message: &'a str) -> HostFuture<'a, HostOffer> {
        Box::pin(async move {
            HostOffer {
                tools: self.tools.clone(),
                prompt: self.prompt.clone(),
                warnings: Vec::new(),
            }
        })
    }
}

/// A host tool as [`crate::AgentTool`] holds it.
#[derive(Clone)]
pub struct HostToolRef(pub Arc<dyn HostTool>);

impl std::fmt::Debug for HostToolRef {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("HostTool")
            .field("skill", &self.0.skill())
            .field("name", &self.0.spec().name)
            .finish()
    }
}

/// A sub-agent's task: what a `context: fork` instruction skill asks the session to run in a
/// fresh conversation (see [`Forker`]).
#[derive(Debug, Clone, PartialEq)]
pub struct ForkTask {
    /// The skill it runs for: its constraint is named after it.
    pub skill: String,
    /// The first (and only) user message of the fresh conversation: the skill's body with
    /// its arguments substituted.
    pub task: String,
    /// The model of the sub-agent's requests (`None`: the parent turn's).
    pub model: Option<String>,
    /// The skill's `allowed_tools`: a constraint of the sub-agent (`None`: no constraint of
    /// its own; the parent's components' still apply).
    pub allowed_tools: Option<Vec<String>>,
    /// The caller's constraints that stay in force in the sub-agent (an instruction skill
    /// loaded earlier in the session): a sub-agent never escapes what binds its parent.
    pub inherited: Vec<agent_policy::SkillConstraint>,
}

/// Runs a [`ForkTask`] as a sub-agent of the running turn: the same loop ([`crate::Agent`]),
/// provider, tools, grants, approval gate and audit, a fresh conversation, the skill's
/// constraint merged with the turn's, within what is left of the turn's time and turns.
/// Only the sub-agent's final answer comes back. One at a time: a fork inside a fork is
/// refused.
pub trait Forker: Send + Sync {
    /// The sub-agent's final answer, or why it did not run or failed.
    fn fork<'a>(&'a self, task: ForkTask) -> HostFuture<'a, Result<String, String>>;
}
