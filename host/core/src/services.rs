//! What the agent lends to skills: the model (`llm` import) through
//! [`ProviderLlm`], and other skills (`skills.invoke`) through [`Invoker`].

use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, OnceLock};

use agent_policy::Merged;
use agent_providers::{CancellationToken, Message, Provider, Request, Role};
use agent_runtime::{
    BoxFuture, CallContext, InvokeError, LlmBackend, LlmRequest, LlmRole, Runtime, Skill,
    SkillError,
};

use crate::ApprovalGate;
use crate::router::{Caller, Functions, Routed, ToolRouter};

/// Token usage of skills' model requests, shared with the loop so that they
/// count against the run.
#[derive(Debug, Default)]
pub struct SkillUsage {
    /// Prompt tokens.
    pub input_tokens: AtomicU64,
    /// Generated tokens.
    pub output_tokens: AtomicU64,
    /// Requests made.
    pub requests: AtomicU64,
}

/// Serves the `llm` import with the run's provider and model.
pub struct ProviderLlm {
    provider: Arc<dyn Provider>,
    model: String,
    max_tokens: u32,
    usage: Arc<SkillUsage>,
}

impl ProviderLlm {
    /// A backend over `provider`; requests ask for at most `max_tokens`.
    pub fn new(provider: Arc<dyn Provider>, model: &str, max_tokens: u32) -> ProviderLlm {
        ProviderLlm {
            provider,
            model: model.to_string(),
            max_tokens,
            usage: Arc::new(SkillUsage::default()),
        }
    }

    /// The usage counters, updated after every request.
    pub fn usage(&self) -> Arc<SkillUsage> {
        self.usage.clone()
    }
}

/// Whether `text` is JSON within the limits on size and depth.
fn is_json(text: &str) -> bool {
    agent_bounded::parse_json::<serde_json::Value>(text, "answer", agent_bounded::Limits::MESSAGE)
        .is_ok()
}

/// The JSON value in a model's answer: the whole text, or the inside of a
/// fenced block, or the outermost `{...}` / `[...]`.
fn extract_json(text: &str) -> String {
    let t = text.trim();
    if is_json(t) {
        return t.to_string();
    }
    if let Some(start) = t.find("```") {
        let body = &t[start + 3..];
        let body = body.strip_prefix("json").unwrap_or(body);
        if let Some(end) = body.find("```") {
            let inner = body[..end].trim();
            if is_json(inner) {
                return inner.to_string();
            }
        }
    }
    for (open, close) in [('{', '}'), ('[', ']')] {
        if let (Some(a), Some(b)) = (t.find(open), t.rfind(close))
            && a < b
        {
            let inner = &t[a..=b];
            if is_json(inner) {
                return inner.to_string();
            }
        }
    }
    t.to_string()
}

impl LlmBackend for ProviderLlm {
    fn complete<'a>(
        &'a self,
        _skill: &'a str,
        request: LlmRequest,
    ) -> BoxFuture<'a, Result<String, String>> {
        Box::pin(async move {
            let mut system: Vec<String> = request.system.into_iter().collect();
            let mut messages = Vec::new();
            for (role, text) in request.messages {
                match role {
                    LlmRole::System => system.push(text),
                    LlmRole::User | LlmRole::Tool => messages.push(Message::user(text)),
                    LlmRole::Assistant => messages.push(Message::assistant(text)),
                }
            }
            if messages.first().is_some_and(|m| m.role != Role::User) {
                return Err("the conversation must start with a user message".to_string());
            }
            if let Some(schema) = &request.json_schema {
                system.push(format!(
                    "Answer with one JSON value only, no prose and no code fence, valid against this JSON Schema:\n{schema}"
                ));
            }
            let req = Request {
                model: self.model.clone(),
                system: (!system.is_empty()).then(|| system.join("\n\n")),
                messages,
                tools: Vec::new(),
                max_tokens: request
                    .max_tokens
                    .map_or(self.max_tokens, |m| m.clamp(1, self.max_tokens)),
                temperature: request.temperature,
            };
            let cancel = CancellationToken::new();
            let mut sink = |_| {};
            let completion = self
                .provider
                .stream(&req, &cancel, &mut sink)
                .await
                .map_err(|e| format!("the model request failed: {e}"))?;
            self.usage
                .input_tokens
                .fetch_add(completion.usage.input_tokens, Ordering::Relaxed);
            self.usage
                .output_tokens
                .fetch_add(completion.usage.output_tokens, Ordering::Relaxed);
            self.usage.requests.fetch_add(1, Ordering::Relaxed);
            let text = completion.message.text();
            Ok(if request.json_schema.is_some() {
                extract_json(&text)
            } else {
                text
            })
        })
    }
}

/// Serves `skills.invoke`: routes the call through the one
/// [`crate::router`] (as `Caller::Skill`): the callee among the loaded
/// skills runs its tool or workflow with its own grants, through the same
/// constraints, schema check and approval gate as the model's calls.
pub struct Invoker {
    runtime: Arc<Runtime>,
    skills: Arc<Vec<Skill>>,
    gate: Arc<dyn ApprovalGate>,
    constraints: OnceLock<Arc<Merged>>,
    functions: Functions,
}

impl Invoker {
    /// An invoker over `skills`.
    pub fn new(
        runtime: Arc<Runtime>,
        skills: Arc<Vec<Skill>>,
        gate: Arc<dyn ApprovalGate>,
    ) -> Invoker {
        Invoker {
            runtime,
            skills,
            gate,
            constraints: OnceLock::new(),
            functions: Functions::default(),
        }
    }

    /// Applies the run's merged skill constraints to invoked tools too
    /// (once; later calls are ignored).
    pub fn set_constraints(&self, constraints: Arc<Merged>) {
        let _ = self.constraints.set(constraints);
    }
}

fn skill_error(e: SkillError) -> InvokeError {
    match e {
        SkillError::InvalidInput(m) => InvokeError::Invalid(m),
        SkillError::NotFound(m) => InvokeError::NotFound(m),
        SkillError::Denied(m) => InvokeError::Denied(m),
        SkillError::Failed(m) => InvokeError::Failed(m),
    }
}

impl agent_runtime::SkillInvoker for Invoker {
    fn invoke<'a>(
        &'a self,
        ctx: &'a Arc<CallContext>,
        caller: &'a str,
        skill: &'a str,
        function: &'a str,
        input: &'a str,
    ) -> BoxFuture<'a, Result<String, InvokeError>> {
        Box::pin(async move {
            let router = ToolRouter {
                runtime: &self.runtime,
                skills: &self.skills,
                gate: self.gate.as_ref(),
                constraints: self.constraints.get().map(|c| c.as_ref()),
            };
            let call = Caller::Skill {
                caller,
                skill,
                function,
                functions: &self.functions,
                ctx,
            };
            match router.route(call, input.to_string()).await.1 {
                Routed::NotFound(m) => Err(InvokeError::NotFound(m)),
                Routed::Refused(m) => Err(InvokeError::Denied(m)),
                Routed::Invalid(m) => Err(InvokeError::Invalid(m)),
                Routed::Ran(Ok(out)) => Ok(out.text),
                Routed::Ran(Err(e)) => Err(skill_error(e)),
                Routed::Failed(e) => Err(InvokeError::Failed(e.to_string())),
                // Hooks do not watch a skill's calls; kept total all the same.
                Routed::Rewritten { output, is_error } => {
                    if is_error {
                        Err(InvokeError::Failed(output))
                    } else {
                        Ok(output)
                    }
                }
            }
        })
    }
}

#[cfg(test)]
mod tests {
    use super::extract_json;

    #[test]
    fn json_is_found_in_prose_and_fences() {
        assert_eq!(extract_json(" {\"a\": 1} "), "{\"a\": 1}");
        assert_eq!(
            extract_json("Here:\n```json\n{\"a\": [1]}\n```\nDone."),
            "{\"a\": [1]}"
        );
        assert_eq!(
            extract_json("Sure! {\"ok\": true} hope that helps"),
            "{\"ok\": true}"
        );
        assert_eq!(extract_json("[1, 2]"), "[1, 2]");
        assert_eq!(extract_json("no json"), "no json");
    }
}
