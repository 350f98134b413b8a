//! Host implementations of the `agent:skill` capability imports.
//!
//! Every import that needs a permission asks the authorizer on each use and
//! answers `capability-error::denied` — never a trap — when refused.

mod exec;
mod exec_guard;
mod exec_path;
mod git;
mod git_env;
mod http;
mod syntax;

use crate::Access;
use crate::bindings::agent::skill::{config, llm, log, project, skills, types};
use crate::bindings::types::{CapabilityError, LogLevel};
use crate::state::{GUEST_PROJECT_ROOT, HostState, LogLine};
use agent_manifest::Permission;

/// Most log lines kept per call; more are counted and dropped.
const MAX_LOG_LINES: usize = 1000;
/// Longest log line kept (bytes); longer ones are cut.
const MAX_LOG_LINE: usize = 16 * 1024;

pub(crate) fn denied(access: Access) -> Option<CapabilityError> {
    match access {
        Access::Granted => None,
        Access::Denied(reason) | Access::Unrecorded(reason) => {
            Some(CapabilityError::Denied(reason))
        }
    }
}

pub(crate) fn truncate_utf8(s: &mut String, max: usize) -> bool {
    if s.len() <= max {
        return false;
    }
    let mut cut = max;
    while !s.is_char_boundary(cut) {
        cut -= 1;
    }
    s.truncate(cut);
    true
}

impl types::Host for HostState {}

impl log::Host for HostState {
    async fn log(&mut self, level: LogLevel, message: String) -> wasmtime::Result<()> {
        let level = match level {
            LogLevel::Trace => "trace",
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        };
        self.host_log(level, message);
        Ok(())
    }
}

impl HostState {
    /// Adds a line to the call's log (the guest's `log` import, or a note of
    /// the host about this call), within the per-call caps.
    pub(crate) fn host_log(&mut self, level: &str, mut message: String) {
        if self.logs.len() >= MAX_LOG_LINES {
            self.logs_dropped += 1;
            return;
        }
        if truncate_utf8(&mut message, MAX_LOG_LINE) {
            message.push_str(" [cut]");
        }
        tracing::debug!(skill = %self.skill.name, level, "{message}");
        self.logs.push(LogLine {
            level: level.to_string(),
            message,
        });
    }
}

impl project::Host for HostState {
    async fn name(&mut self) -> wasmtime::Result<String> {
        Ok(self.ctx.project.name.clone())
    }

    async fn guest_root(&mut self) -> wasmtime::Result<Option<String>> {
        Ok(self.file_access.map(|_| GUEST_PROJECT_ROOT.to_string()))
    }

    async fn languages(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(self.ctx.project.languages.clone())
    }

    async fn build_system(&mut self) -> wasmtime::Result<Option<String>> {
        Ok(self.ctx.project.build_system.clone())
    }

    async fn mode(&mut self) -> wasmtime::Result<String> {
        Ok(self.ctx.mode.clone())
    }

    async fn mount(&mut self) -> wasmtime::Result<project::MountMode> {
        Ok(match self.file_access {
            None => project::MountMode::None,
            Some(crate::state::FileAccess::ReadOnly) => project::MountMode::ReadOnly,
            Some(crate::state::FileAccess::ReadWrite) => project::MountMode::ReadWrite,
        })
    }
}

impl config::Host for HostState {
    async fn get_all(&mut self) -> wasmtime::Result<String> {
        Ok(self
            .ctx
            .skill_config
            .get(&self.skill.name)
            .map(|v| v.to_string())
            .unwrap_or_else(|| "{}".to_string()))
    }

    async fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        Ok(self
            .ctx
            .skill_config
            .get(&self.skill.name)
            .and_then(|v| v.get(&key))
            .map(|v| v.to_string()))
    }
}

/// Deepest chain of `skills.invoke` calls (a skill calling a skill calling...).
pub const MAX_INVOKE_DEPTH: u32 = 4;

fn llm_request(request: llm::CompletionRequest, schema: Option<String>) -> crate::LlmRequest {
    crate::LlmRequest {
        system: request.system,
        messages: request
            .messages
            .into_iter()
            .map(|m| {
                let role = match m.role {
                    types::Role::System => crate::LlmRole::System,
                    types::Role::User => crate::LlmRole::User,
                    types::Role::Assistant => crate::LlmRole::Assistant,
                    types::Role::Tool => crate::LlmRole::Tool,
                };
                (role, m.content)
            })
            .collect(),
        max_tokens: request.max_tokens,
        temperature: request.temperature,
        json_schema: schema,
    }
}

impl HostState {
    async fn llm_call(
        &mut self,
        request: llm::CompletionRequest,
        schema: Option<String>,
    ) -> Result<String, CapabilityError> {
        let what = if schema.is_some() {
            "llm.complete-json"
        } else {
            "llm.complete"
        };
        if let Some(err) = denied(self.authorize(Permission::LlmCall, None, what)) {
            return Err(err);
        }
        if request.messages.is_empty() {
            return Err(CapabilityError::Invalid(format!(
                "{what}: the request has no messages"
            )));
        }
        if let Some(s) = &schema
            && let Err(e) = agent_bounded::parse_json::<serde_json::Value>(
                s,
                "schema",
                agent_bounded::Limits::MESSAGE,
            )
        {
            return Err(CapabilityError::Invalid(format!(
                "{what}: the schema is not JSON: {e}"
            )));
        }
        let Some(backend) = self.ctx.llm.clone() else {
            self.record_use("llm:call", what, "unavailable");
            return Err(CapabilityError::Unavailable(format!(
                "{what}: no model is configured in this context (`{}`); run the skill from `agent run`",
                self.ctx.mode
            )));
        };
        self.llm_count += 1;
        if self.llm_count > self.policy.max_llm_per_call {
            return Err(CapabilityError::LimitExceeded(format!(
                "at most {} model requests per call",
                self.policy.max_llm_per_call
            )));
        }
        self.spend(crate::Use::Llm, what)?;
        let limit = self.clamp_to_deadline(self.policy.llm_timeout);
        let skill = self.skill.name.clone();
        let req = llm_request(request, schema.clone());
        let answer = tokio::time::timeout(limit, backend.complete(&skill, req)).await;
        match answer {
            Err(_) => {
                self.record_use("llm:call", what, "timed out");
                Err(CapabilityError::TimedOut)
            }
            Ok(Err(e)) => {
                self.record_use("llm:call", what, "failed");
                Err(CapabilityError::Failed(e))
            }
            Ok(Ok(text)) => {
                if let Some(schema) = &schema
                    && let Err(problem) = crate::schema::check_input(schema, &text)
                {
                    self.record_use("llm:call", what, "invalid answer");
                    return Err(CapabilityError::Failed(format!(
                        "the model's answer does not match the schema: {problem}"
                    )));
                }
                self.record_use("llm:call", what, "ok");
                Ok(text)
            }
        }
    }
}

impl llm::Host for HostState {
    async fn complete(
        &mut self,
        request: llm::CompletionRequest,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        Ok(self.llm_call(request, None).await)
    }

    async fn complete_json(
        &mut self,
        request: llm::CompletionRequest,
        schema: String,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        Ok(self.llm_call(request, Some(schema)).await)
    }
}

impl skills::Host for HostState {
    async fn invoke(
        &mut self,
        skill: String,
        function: String,
        input: String,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        let what = format!("skills.invoke({skill}, {function})");
        if let Some(err) = denied(self.authorize(Permission::SkillInvoke, Some(&skill), &what)) {
            return Ok(Err(err));
        }
        if skill == self.skill.name {
            return Ok(Err(CapabilityError::Invalid(format!(
                "{what}: a skill cannot invoke itself; call your own code directly"
            ))));
        }
        if self.ctx.depth >= MAX_INVOKE_DEPTH {
            self.record_use("skill:invoke", &what, "refused: too deep");
            return Ok(Err(CapabilityError::LimitExceeded(format!(
                "{what}: skills may call each other at most {MAX_INVOKE_DEPTH} levels deep"
            ))));
        }
        let Some(invoker) = self.ctx.invoker.clone() else {
            self.record_use("skill:invoke", &what, "unavailable");
            return Ok(Err(CapabilityError::Unavailable(format!(
                "{what}: no other skills are loaded in this context (`{}`)",
                self.ctx.mode
            ))));
        };
        let limit = self.clamp_to_deadline(self.policy.call_timeout);
        let ctx = self.ctx.clone();
        let caller = self.skill.name.clone();
        let answer = tokio::time::timeout(
            limit,
            invoker.invoke(&ctx, &caller, &skill, &function, &input),
        )
        .await;
        let result = match answer {
            Err(_) => Err(CapabilityError::TimedOut),
            Ok(Ok(out)) => Ok(out),
            Ok(Err(crate::InvokeError::NotFound(m))) => Err(CapabilityError::Invalid(m)),
            Ok(Err(crate::InvokeError::Invalid(m))) => Err(CapabilityError::Invalid(m)),
            Ok(Err(crate::InvokeError::Denied(m))) => Err(CapabilityError::Denied(m)),
            Ok(Err(crate::InvokeError::Failed(m))) => Err(CapabilityError::Failed(m)),
        };
        let outcome = match &result {
            Ok(_) => "ok".to_string(),
            Err(e) => format!("{e:?}").chars().take(200).collect(),
        };
        self.record_use("skill:invoke", &what, &outcome);
        Ok(result)
    }
}
