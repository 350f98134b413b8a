//! Host implementations of the `agent:skill` capability imports.
//!
//! Every import that needs a permission asks the authorizer on each use and
//! answers `capability-error::denied` — never a trap — when refused.

mod exec;
mod git;
mod http;

use crate::Access;
use crate::bindings::agent::skill::{config, llm, log, project, skills, syntax, types};
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
        Access::Denied(reason) => Some(CapabilityError::Denied(reason)),
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
    async fn log(&mut self, level: LogLevel, mut message: String) -> wasmtime::Result<()> {
        if self.logs.len() >= MAX_LOG_LINES {
            self.logs_dropped += 1;
            return Ok(());
        }
        if truncate_utf8(&mut message, MAX_LOG_LINE) {
            message.push_str(" [cut]");
        }
        let level = match level {
            LogLevel::Trace => "trace",
            LogLevel::Debug => "debug",
            LogLevel::Info => "info",
            LogLevel::Warn => "warn",
            LogLevel::Error => "error",
        };
        tracing::debug!(skill = %self.skill.name, level, "{message}");
        self.logs.push(LogLine {
            level: level.to_string(),
            message,
        });
        Ok(())
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

const LATER: &str = "is not available in this version of agent";

impl llm::Host for HostState {
    async fn complete(
        &mut self,
        _request: llm::CompletionRequest,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        Ok(Err(self.unavailable(Permission::LlmCall, "llm.complete")))
    }

    async fn complete_json(
        &mut self,
        _request: llm::CompletionRequest,
        _schema: String,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        Ok(Err(
            self.unavailable(Permission::LlmCall, "llm.complete-json")
        ))
    }
}

impl skills::Host for HostState {
    async fn invoke(
        &mut self,
        skill: String,
        function: String,
        _input: String,
    ) -> wasmtime::Result<Result<String, CapabilityError>> {
        let what = format!("skills.invoke({skill}, {function})");
        Ok(Err(self.unavailable(Permission::SkillInvoke, &what)))
    }
}

impl syntax::Host for HostState {
    async fn languages(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(Vec::new())
    }

    async fn query(
        &mut self,
        language: String,
        _source: String,
        _query: String,
    ) -> wasmtime::Result<Result<Vec<syntax::QueryMatch>, CapabilityError>> {
        self.record_use("syntax", &language, "unavailable");
        Ok(Err(CapabilityError::Unavailable(format!(
            "syntax.query {LATER}: tree-sitter parsing arrives with the security engine"
        ))))
    }
}

impl HostState {
    /// The answer of an import whose host side is not built yet: still
    /// permission-checked, so a skill learns about a missing grant first.
    fn unavailable(&self, perm: Permission, what: &str) -> CapabilityError {
        if let Some(err) = denied(self.authorize(perm, None, what)) {
            return err;
        }
        self.record_use(perm.as_str(), what, "unavailable");
        CapabilityError::Unavailable(format!(
            "{what} {LATER}: {} arrives with the agent core",
            perm.as_str()
        ))
    }
}
