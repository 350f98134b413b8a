//! The `syntax` import: tree-sitter parsing and queries, no permission needed.
//!
//! The work runs on tokio's blocking pool (never on the thread that drives other
//! calls), within [`agent_syntax::Bounds`]: a deadline a little before the call's own,
//! so the skill can still answer with the refusal, and a result size of a quarter of the
//! skill's memory limit. Every refusal is audited with what was refused and why.

use std::time::{Duration, Instant};

use agent_syntax::{Bounds, SyntaxError};

use crate::bindings::agent::skill::syntax;
use crate::bindings::types::CapabilityError;
use crate::state::HostState;

/// Most of the call's remaining time a query keeps for the skill to answer: a tenth of
/// what is left, at most this much.
const ANSWER_RESERVE: Duration = Duration::from_secs(1);

/// Longest language name kept in the audit log (it is the guest's string).
const AUDIT_LANGUAGE_CHARS: usize = 64;

impl HostState {
    /// The bounds of one query started now.
    fn syntax_bounds(&self) -> Bounds {
        let deadline = self.deadline.map(|d| {
            let left = d.saturating_duration_since(Instant::now());
            d - (left / 10).min(ANSWER_RESERVE)
        });
        Bounds::for_guest_memory(self.policy.memory, deadline)
    }
}

impl syntax::Host for HostState {
    async fn languages(&mut self) -> wasmtime::Result<Vec<String>> {
        Ok(agent_syntax::languages()
            .iter()
            .map(|l| (*l).to_string())
            .collect())
    }

    async fn query(
        &mut self,
        language: String,
        source: String,
        query: String,
    ) -> wasmtime::Result<Result<Vec<syntax::QueryMatch>, CapabilityError>> {
        let bounds = self.syntax_bounds();
        let short: String = language.chars().take(AUDIT_LANGUAGE_CHARS).collect();
        // Parsing and matching are CPU work bounded by `bounds.deadline`; they run on the
        // blocking pool so that a slow query never holds a runtime thread.
        let work = tokio::task::spawn_blocking(move || {
            agent_syntax::query_bounded(&language, &source, &query, &bounds)
        })
        .await;
        let result = match work {
            Ok(Ok(matches)) => return Ok(Ok(matches.into_iter().map(wit_match).collect())),
            Ok(Err(e)) => e,
            Err(_) => {
                // The task panicked or was cancelled: no host detail reaches the guest.
                self.record_use("syntax", &short, "failed: the parser stopped unexpectedly");
                return Ok(Err(CapabilityError::Failed(
                    "syntax.query: the parser stopped unexpectedly".to_string(),
                )));
            }
        };
        // Parsing needs no permission and touches nothing but the text the guest passed
        // in: successful calls are not audited (a security audit makes thousands, from
        // parallel workers). Refusals are, with their reason, so a skill probing the
        // parser still leaves a trace.
        let outcome = match &result {
            SyntaxError::UnknownLanguage { .. } => "unknown-language",
            SyntaxError::BadQuery { .. } => "bad-query",
            SyntaxError::TooLarge { .. } => "too-large",
            SyntaxError::TimedOut { .. } => "timed-out",
            SyntaxError::Parse { .. } | SyntaxError::Grammar { .. } => "failed",
        };
        let reason: String = result.to_string().chars().take(200).collect();
        self.record_use("syntax", &format!("{short}: {reason}"), outcome);
        let message = format!("syntax.query: {result}");
        Ok(Err(match result {
            SyntaxError::TooLarge { .. } => CapabilityError::LimitExceeded(message),
            SyntaxError::TimedOut { .. } => CapabilityError::LimitExceeded(format!(
                "{message}; the query's deadline is the call's, less a tenth of the time left \
                 (at most {ANSWER_RESERVE:?}) kept for the skill to answer: query a smaller \
                 source or a simpler pattern"
            )),
            SyntaxError::Parse { .. } | SyntaxError::Grammar { .. } => {
                CapabilityError::Failed(message)
            }
            SyntaxError::UnknownLanguage { .. } | SyntaxError::BadQuery { .. } => {
                CapabilityError::Invalid(message)
            }
        }))
    }
}

fn wit_match(m: agent_syntax::QueryMatch) -> syntax::QueryMatch {
    syntax::QueryMatch {
        pattern: m.pattern,
        captures: m
            .captures
            .into_iter()
            .map(|c| syntax::Capture {
                name: c.name,
                text: c.text,
                start_byte: c.start_byte,
                end_byte: c.end_byte,
                start_line: c.start_line,
                start_column: c.start_column,
                end_line: c.end_line,
                end_column: c.end_column,
            })
            .collect(),
    }
}
