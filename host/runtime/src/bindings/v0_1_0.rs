//! `agent:skill@0.1.0`, frozen in `wit/0.1.0/`, served through the latest
//! contract: every 0.1.0 import is implemented by converting its arguments
//! into the latest types, calling the latest host implementation, and
//! converting the answer back; exports are converted the other way in
//! `super::versioned`. The interfaces 0.2.0 kept unchanged (`types`) are
//! shared, not copied.
//!
//! When a later version changes an interface, the previous version's
//! adapter converts; when it adds one, the older versions simply lack it.

use wasmtime::component::{HasSelf, Linker};

use super::agent::skill as latest;
use crate::contract::V0_1_0;
use crate::state::HostState;

wasmtime::component::bindgen!({
    path: "../../wit/0.1.0",
    world: "full-skill",
    imports: { default: async | trappable },
    exports: { default: async },
    with: {
        "agent:skill/types": crate::bindings::agent::skill::types,
    },
});

use agent::skill::{config, exec, git, git_write, http, llm, log, project, skills, syntax};
use exports::agent::skill::{prompt, scanner, transform, workflow};
use latest::types::{CapabilityError, LogLevel};

/// Links every 0.1.0 import (next to the latest ones: the names differ).
pub(crate) fn add_to_linker(linker: &mut Linker<HostState>) -> wasmtime::Result<()> {
    FullSkill::add_to_linker::<HostState, HasSelf<HostState>>(linker, |s| s)?;
    // `types` holds only types; a component built against 0.1.0 still
    // imports it as an instance of its own name.
    linker.instance(&V0_1_0.interface("types"))?;
    Ok(())
}

type Answer<T> = wasmtime::Result<Result<T, CapabilityError>>;

impl log::Host for HostState {
    async fn log(&mut self, level: LogLevel, message: String) -> wasmtime::Result<()> {
        latest::log::Host::log(self, level, message).await
    }
}

impl project::Host for HostState {
    async fn name(&mut self) -> wasmtime::Result<String> {
        latest::project::Host::name(self).await
    }
    async fn guest_root(&mut self) -> wasmtime::Result<Option<String>> {
        latest::project::Host::guest_root(self).await
    }
    async fn languages(&mut self) -> wasmtime::Result<Vec<String>> {
        latest::project::Host::languages(self).await
    }
    async fn build_system(&mut self) -> wasmtime::Result<Option<String>> {
        latest::project::Host::build_system(self).await
    }
    async fn mode(&mut self) -> wasmtime::Result<String> {
        latest::project::Host::mode(self).await
    }
}

impl config::Host for HostState {
    async fn get_all(&mut self) -> wasmtime::Result<String> {
        latest::config::Host::get_all(self).await
    }
    async fn get(&mut self, key: String) -> wasmtime::Result<Option<String>> {
        latest::config::Host::get(self, key).await
    }
}

impl syntax::Host for HostState {
    async fn languages(&mut self) -> wasmtime::Result<Vec<String>> {
        latest::syntax::Host::languages(self).await
    }
    async fn query(
        &mut self,
        language: String,
        source: String,
        query: String,
    ) -> Answer<Vec<syntax::QueryMatch>> {
        let answer = latest::syntax::Host::query(self, language, source, query).await?;
        Ok(answer.map(|ms| ms.into_iter().map(Into::into).collect()))
    }
}

impl exec::Host for HostState {
    async fn run(&mut self, request: exec::ExecRequest) -> Answer<exec::ExecOutput> {
        let answer = latest::exec::Host::run(self, request.into()).await?;
        Ok(answer.map(Into::into))
    }
}

impl http::Host for HostState {
    async fn fetch(&mut self, request: http::HttpRequest) -> Answer<http::HttpResponse> {
        let answer = latest::http::Host::fetch(self, request.into()).await?;
        Ok(answer.map(Into::into))
    }
}

impl llm::Host for HostState {
    async fn complete(&mut self, request: llm::CompletionRequest) -> Answer<String> {
        latest::llm::Host::complete(self, request.into()).await
    }
    async fn complete_json(
        &mut self,
        request: llm::CompletionRequest,
        schema: String,
    ) -> Answer<String> {
        latest::llm::Host::complete_json(self, request.into(), schema).await
    }
}

impl git::Host for HostState {
    async fn status(&mut self) -> Answer<Vec<git::FileStatus>> {
        let answer = latest::git::Host::status(self).await?;
        Ok(answer.map(|v| v.into_iter().map(Into::into).collect()))
    }
    async fn diff(
        &mut self,
        base: Option<String>,
        head: Option<String>,
        paths: Vec<String>,
    ) -> Answer<String> {
        latest::git::Host::diff(self, base, head, paths).await
    }
    async fn log(&mut self, max: u32, rev: Option<String>) -> Answer<Vec<git::Commit>> {
        let answer = latest::git::Host::log(self, max, rev).await?;
        Ok(answer.map(|v| v.into_iter().map(Into::into).collect()))
    }
    async fn show(&mut self, rev: String) -> Answer<String> {
        latest::git::Host::show(self, rev).await
    }
}

impl git_write::Host for HostState {
    async fn commit(&mut self, message: String, paths: Vec<String>) -> Answer<String> {
        latest::git_write::Host::commit(self, message, paths).await
    }
    async fn branch(&mut self, name: String, start: Option<String>) -> Answer<()> {
        latest::git_write::Host::branch(self, name, start).await
    }
}

impl skills::Host for HostState {
    async fn invoke(&mut self, skill: String, function: String, input: String) -> Answer<String> {
        latest::skills::Host::invoke(self, skill, function, input).await
    }
}

/// `From` both ways (or one way) between a 0.1.0 record and its latest twin,
/// field by field: a field added or renamed in a later version is a compile
/// error here, never a silent default.
macro_rules! same_record {
    ($a:path => $b:path { $($field:ident),* $(,)? }) => {
        impl From<$a> for $b {
            fn from(v: $a) -> $b {
                $b { $($field: v.$field.into()),* }
            }
        }
    };
}

same_record!(exec::ExecRequest => latest::exec::ExecRequest { program, args, cwd, env, stdin, timeout_ms });
same_record!(latest::exec::ExecOutput => exec::ExecOutput { exit_code, stdout, stderr, truncated, timed_out });
same_record!(http::HttpRequest => latest::http::HttpRequest { method, url, headers, body, timeout_ms });
same_record!(latest::http::HttpResponse => http::HttpResponse { status, headers, body });
same_record!(llm::CompletionRequest => latest::llm::CompletionRequest { system, messages, max_tokens, temperature });
same_record!(latest::git::FileStatus => git::FileStatus { path, status });
same_record!(latest::git::Commit => git::Commit { id, author, email, time, summary, message });
same_record!(latest::syntax::Capture => syntax::Capture {
    name, text, start_byte, end_byte, start_line, start_column, end_line, end_column,
});

impl From<latest::syntax::QueryMatch> for syntax::QueryMatch {
    fn from(m: latest::syntax::QueryMatch) -> syntax::QueryMatch {
        syntax::QueryMatch {
            pattern: m.pattern,
            captures: m.captures.into_iter().map(Into::into).collect(),
        }
    }
}

use super::workflow as workflow_now;
use super::{prompt as prompt_now, scanner as scanner_now, transform as transform_now};

same_record!(prompt_now::PromptContext => prompt::PromptContext { mode, user_message, languages, max_tokens });
same_record!(prompt::PromptFragment => prompt_now::PromptFragment { title, content, priority });
same_record!(workflow::WorkflowSpec => workflow_now::WorkflowSpec { name, description, input_schema });
same_record!(scanner::ScannerSpec => scanner_now::ScannerSpec { name, description, file_patterns, languages });
same_record!(scanner_now::ScanTarget => scanner::ScanTarget { path, content, language });
same_record!(transform_now::TransformContext => transform::TransformContext { mode, format });
