//! What the loop does with a misbehaving model: answers broken off
//! mid-stream are sent again, tool calls whose arguments are not JSON are
//! answered with an error the model can act on, and an answer asking for
//! more tool calls than a turn allows has the rest answered "not run".

use agent_providers::{
    CancellationToken, Completion, InvalidToolInput, ProviderError, Request, RetryPolicy,
    StreamEvent,
};
use serde_json::Value;

use crate::session_log::Emitter;
use crate::{Agent, AgentEvent, RunOutcome};

/// How one model request ended.
pub(crate) enum Streamed {
    /// The model answered.
    Done(Completion),
    /// The run's deadline passed.
    Timeout,
    /// The run was cancelled.
    Cancelled,
    /// The provider failed; `attempts` requests were sent.
    Failed {
        /// The last error.
        error: ProviderError,
        /// How many requests were sent.
        attempts: u32,
    },
}

impl Agent<'_> {
    /// Sends `req` and streams the answer, text deltas to `em` (unless
    /// hooks or transforms rewrite the text). An answer that breaks off
    /// mid-stream ([`ProviderError::Interrupted`]) is reported with an
    /// [`AgentEvent::Interrupted`] and the request sent again after the
    /// `retry` policy's backoff, as the provider does for a 5xx, up to its
    /// `max_attempts`. The deadline bounds everything: each read of the
    /// stream and each wait.
    pub(crate) async fn stream_turn(
        &self,
        req: &Request,
        cancel: &CancellationToken,
        deadline: tokio::time::Instant,
        retry: RetryPolicy,
        em: &mut Emitter<'_>,
        out: &mut RunOutcome,
    ) -> Streamed {
        let rewrites = self.rewrites_output();
        let max = retry.max_attempts.max(1);
        let mut attempt = 0;
        loop {
            attempt += 1;
            let streamed = {
                let em_ref = &mut *em;
                let mut on_event = move |ev: StreamEvent| {
                    if let StreamEvent::TextDelta(text) = ev
                        && !rewrites
                    {
                        em_ref.emit(AgentEvent::TextDelta { text });
                    }
                };
                tokio::time::timeout_at(deadline, self.provider.stream(req, cancel, &mut on_event))
                    .await
            };
            let error = match streamed {
                Err(_) => {
                    cancel.cancel();
                    return Streamed::Timeout;
                }
                Ok(Err(ProviderError::Cancelled)) if cancel.is_cancelled() => {
                    return Streamed::Cancelled;
                }
                Ok(Ok(c)) => return Streamed::Done(c),
                Ok(Err(e)) => e,
            };
            if !matches!(error, ProviderError::Interrupted { .. }) {
                return Streamed::Failed {
                    error,
                    attempts: attempt,
                };
            }
            out.interrupted_streams += 1;
            let retrying = attempt < max;
            em.emit(AgentEvent::Interrupted {
                message: error.to_string(),
                attempt,
                retrying,
            });
            if !retrying {
                return Streamed::Failed {
                    error,
                    attempts: attempt,
                };
            }
            let until = (tokio::time::Instant::now() + retry.backoff(attempt - 1)).min(deadline);
            tokio::select! {
                _ = cancel.cancelled() => return Streamed::Cancelled,
                _ = tokio::time::sleep_until(until) => {}
            }
            if tokio::time::Instant::now() >= deadline {
                cancel.cancel();
                return Streamed::Timeout;
            }
        }
    }
}

/// What becomes of one tool call of an answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) enum Plan {
    /// It runs.
    Run,
    /// Its arguments are not JSON: answered with this error, not run.
    Invalid(String),
    /// Beyond the turn's cap: answered with this error, not run.
    OverCap(String),
}

/// Decides each call of an answer, in order: the first `cap` well-formed
/// or malformed calls are considered, the rest are over the cap; a call
/// listed in `invalid` is answered with its parse error.
pub(crate) fn plan_calls(
    calls: &[(String, String, Value)],
    invalid: &[InvalidToolInput],
    cap: usize,
) -> Vec<Plan> {
    let total = calls.len();
    calls
        .iter()
        .enumerate()
        .map(|(i, (id, name, _))| {
            if i >= cap {
                return Plan::OverCap(over_cap_message(total, cap));
            }
            match invalid.iter().find(|v| &v.id == id) {
                Some(v) => Plan::Invalid(invalid_message(name, v)),
                None => Plan::Run,
            }
        })
        .collect()
}

/// The tool result for a call whose arguments are not JSON: the parse error
/// quoted, and what to do.
fn invalid_message(name: &str, v: &InvalidToolInput) -> String {
    format!(
        "not run: the arguments of this call to `{name}` are not valid JSON ({}). \
         Send the call again with the arguments as one JSON object that matches the tool's input schema.",
        v.error
    )
}

/// The tool result for a call beyond the turn's cap.
fn over_cap_message(total: usize, cap: usize) -> String {
    format!(
        "not run: this answer asked for {total} tool calls and at most {cap} run per turn \
         (`agent.max_tool_calls_per_turn`); the first {cap} ran. Ask again for the calls you still need."
    )
}

/// The warning for an answer with more calls than the cap.
pub(crate) fn over_cap_warning(total: usize, cap: usize) -> String {
    format!(
        "the model asked for {total} tool calls in one answer: the first {cap} ran, the other {} were answered \"not run\" (`agent.max_tool_calls_per_turn` = {cap})",
        total - cap
    )
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn call(id: &str) -> (String, String, Value) {
        (id.to_string(), "read_file".to_string(), json!({}))
    }

    #[test]
    fn calls_beyond_the_cap_and_invalid_ones_are_not_run() {
        let calls = vec![call("a"), call("b"), call("c"), call("d")];
        let invalid = vec![InvalidToolInput {
            id: "b".into(),
            raw: "{path:".into(),
            error: "key must be a string at line 1 column 2".into(),
        }];
        let plan = plan_calls(&calls, &invalid, 3);
        assert_eq!(plan[0], Plan::Run);
        assert_eq!(
            plan[1],
            Plan::Invalid(
                "not run: the arguments of this call to `read_file` are not valid JSON (key must be a string at line 1 column 2). Send the call again with the arguments as one JSON object that matches the tool's input schema.".into()
            )
        );
        assert_eq!(plan[2], Plan::Run);
        assert_eq!(
            plan[3],
            Plan::OverCap(
                "not run: this answer asked for 4 tool calls and at most 3 run per turn (`agent.max_tool_calls_per_turn`); the first 3 ran. Ask again for the calls you still need.".into()
            )
        );
    }
}
