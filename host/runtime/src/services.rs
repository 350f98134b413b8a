//! Services the embedder lends to skills through host imports: the model
//! (`llm`) and other skills (`skills`). The runtime checks permissions and
//! limits; the embedder does the work.

use std::future::Future;
use std::pin::Pin;
use std::sync::Arc;

use crate::state::CallContext;

/// A boxed future, as the service traits return.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// Who wrote a message of an [`LlmRequest`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum LlmRole {
    /// Instructions.
    System,
    /// The user.
    User,
    /// The model.
    Assistant,
    /// A tool result.
    Tool,
}

/// A completion a skill asks for through `llm.complete` or
/// `llm.complete-json`.
#[derive(Debug, Clone, PartialEq)]
pub struct LlmRequest {
    /// System prompt.
    pub system: Option<String>,
    /// The conversation, as text messages.
    pub messages: Vec<(LlmRole, String)>,
    /// Upper bound on output tokens.
    pub max_tokens: Option<u32>,
    /// Sampling temperature.
    pub temperature: Option<f32>,
    /// For `complete-json`: the JSON Schema the answer must satisfy.
    pub json_schema: Option<String>,
}

/// Answers skills' model requests with the user's configured provider.
pub trait LlmBackend: Send + Sync {
    /// Completes `request` for `skill`; the error text is shown to the skill.
    fn complete<'a>(
        &'a self,
        skill: &'a str,
        request: LlmRequest,
    ) -> BoxFuture<'a, Result<String, String>>;
}

/// Why another skill could not be invoked.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum InvokeError {
    /// No such skill, or it offers no tool or workflow of that name.
    NotFound(String),
    /// The input was refused (schema, or the callee said so).
    Invalid(String),
    /// The callee was refused something, or is not allowed to run.
    Denied(String),
    /// The callee failed.
    Failed(String),
}

/// Runs a tool or workflow of another skill for `skills.invoke`.
///
/// The callee runs with its own grants; `ctx` is the caller's context, from
/// which the invoker derives the callee's with [`CallContext::nested`].
pub trait SkillInvoker: Send + Sync {
    /// Calls `function` of `skill` with JSON `input` on behalf of `caller`.
    fn invoke<'a>(
        &'a self,
        ctx: &'a Arc<CallContext>,
        caller: &'a str,
        skill: &'a str,
        function: &'a str,
        input: &'a str,
    ) -> BoxFuture<'a, Result<String, InvokeError>>;
}
