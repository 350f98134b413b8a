//! What the agent lends to skills: the model (`llm` import) through
//! [`ProviderLlm`], and other skills (`skills.invoke`) through [`Invoker`].

use std::collections::HashMap;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};

use agent_policy::Merged;
use agent_providers::{CancellationToken, Message, Provider, Request, Role};
use agent_runtime::{
    BoxFuture, CallContext, ExportKind, InvokeError, LlmBackend, LlmRequest, LlmRole, Runtime,
    Skill, SkillError,
};

use crate::ApprovalGate;

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

/// What a skill offers to `skills.invoke`.
#[derive(Debug, Clone)]
struct Function {
    name: String,
    workflow: bool,
    schema: String,
    requires_approval: bool,
}

/// Serves `skills.invoke`: finds the callee among the loaded skills and runs
/// its tool or workflow with the callee's own grants, through the same
/// approval gate and skill constraints as the model's calls.
pub struct Invoker {
    runtime: Arc<Runtime>,
    skills: Arc<Vec<Skill>>,
    gate: Arc<dyn ApprovalGate>,
    constraints: OnceLock<Arc<Merged>>,
    functions: Mutex<HashMap<String, Arc<Vec<Function>>>>,
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
            functions: Mutex::new(HashMap::new()),
        }
    }

    /// Applies the run's merged skill constraints to invoked tools too
    /// (once; later calls are ignored).
    pub fn set_constraints(&self, constraints: Arc<Merged>) {
        let _ = self.constraints.set(constraints);
    }

    async fn functions(
        &self,
        ctx: &Arc<CallContext>,
        skill: &Skill,
    ) -> Result<Arc<Vec<Function>>, InvokeError> {
        if let Some(f) = self
            .functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(skill.name())
        {
            return Ok(f.clone());
        }
        let mut out = Vec::new();
        let failed = |e: agent_runtime::CallError| InvokeError::Failed(e.to_string());
        if skill.exports(ExportKind::Tool) {
            for t in self.runtime.list_tools(skill, ctx).await.map_err(failed)? {
                let requires_approval = t.requires_approval
                    || skill
                        .manifest
                        .tool(&t.name)
                        .is_some_and(|d| d.requires_approval);
                out.push(Function {
                    name: t.name,
                    workflow: false,
                    schema: t.input_schema,
                    requires_approval,
                });
            }
        }
        if skill.exports(ExportKind::Workflow) {
            for w in self
                .runtime
                .list_workflows(skill, ctx)
                .await
                .map_err(failed)?
            {
                out.push(Function {
                    name: w.name,
                    workflow: true,
                    schema: w.input_schema,
                    requires_approval: false,
                });
            }
        }
        let out = Arc::new(out);
        self.functions
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(skill.name().to_string(), out.clone());
        Ok(out)
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
            let Some(callee) = self.skills.iter().find(|s| s.name() == skill) else {
                let names: Vec<&str> = self.skills.iter().map(Skill::name).collect();
                return Err(InvokeError::NotFound(format!(
                    "no skill named `{skill}` is loaded (loaded: {}; see `agent skill list`)",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                )));
            };
            let functions = self.functions(ctx, callee).await?;
            let Some(f) = functions.iter().find(|f| f.name == function) else {
                let names: Vec<&str> = functions.iter().map(|f| f.name.as_str()).collect();
                return Err(InvokeError::NotFound(format!(
                    "skill `{skill}` has no tool or workflow `{function}` (it has: {})",
                    if names.is_empty() {
                        "none".to_string()
                    } else {
                        names.join(", ")
                    }
                )));
            };
            if let Some(c) = self.constraints.get()
                && let Err(why) = c.check_tool(function)
            {
                return Err(InvokeError::Denied(why));
            }
            agent_runtime::schema::check_input(&f.schema, input).map_err(|p| {
                InvokeError::Invalid(format!("invalid input for `{skill}`/`{function}`: {p}"))
            })?;
            if f.requires_approval && !self.gate.approve_tool(skill, function, input) {
                return Err(InvokeError::Denied(format!(
                    "`{skill}`/`{function}` (called by `{caller}`) needs approval, and this run did not approve it"
                )));
            }
            let nested = Arc::new(ctx.nested());
            let result = if f.workflow {
                self.runtime
                    .run_workflow(callee, &nested, function, input)
                    .await
            } else {
                self.runtime
                    .call_tool(callee, &nested, function, input)
                    .await
            };
            match result {
                Ok((Ok(out), _logs)) => Ok(out.text),
                Ok((Err(e), _logs)) => Err(skill_error(e)),
                Err(e) => Err(InvokeError::Failed(e.to_string())),
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
