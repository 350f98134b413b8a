//! The tool calls of one answer: each is planned (runs, malformed, over the
//! turn's cap), routed through the [`crate::router`] within the run's
//! deadline, reported and recorded, and its result added to the
//! conversation.

use agent_providers::{ContentBlock, InvalidToolInput, Message, Role};
use serde_json::Value;

use crate::router::{Caller, ToolRouter};
use crate::run::{Next, Run};
use crate::turn::{self, Plan};
use crate::{Agent, AgentError, AgentEvent, StopKind, ToolCallRecord};

/// The outcome of one tool call, as the loop records it.
struct CallResult {
    output: String,
    is_error: bool,
    skill: String,
}

impl CallResult {
    fn error(output: String, skill: &str) -> CallResult {
        CallResult {
            output,
            is_error: true,
            skill: skill.to_string(),
        }
    }
}

impl Agent<'_> {
    /// Runs the tool `calls` of one answer in order (calls with arguments
    /// that are not JSON, listed in `invalid`, and those over the turn's
    /// cap are answered without running), and adds their results to the
    /// conversation. Stops the run when its time is up or too many calls
    /// in a row were malformed.
    pub(crate) async fn run_calls(
        &self,
        run: &mut Run<'_>,
        calls: Vec<(String, String, Value)>,
        invalid: &[InvalidToolInput],
    ) -> Next {
        let cap = run.options.max_tool_calls_per_turn;
        let plans = turn::plan_calls(&calls, invalid, cap);
        if calls.len() > cap {
            run.em.warn(turn::over_cap_warning(calls.len(), cap));
        }
        let mut results = Vec::new();
        let mut timed_out = false;
        let mut last_invalid = String::new();
        for ((id, name, input), plan) in calls.into_iter().zip(plans) {
            let refused = match plan {
                Plan::Run => None,
                Plan::Invalid(why) => {
                    run.out.invalid_tool_calls += 1;
                    run.invalid_in_a_row += 1;
                    last_invalid = why.clone();
                    Some(why)
                }
                Plan::OverCap(why) => {
                    run.out.skipped_tool_calls += 1;
                    Some(why)
                }
            };
            if refused.is_none() {
                run.invalid_in_a_row = 0;
            }
            let r = if let Some(why) = refused {
                run.em.emit(AgentEvent::ToolCall {
                    id: id.clone(),
                    skill: String::new(),
                    tool: name.clone(),
                    name: name.clone(),
                    input: input.clone(),
                });
                CallResult::error(why, "")
            } else if timed_out {
                CallResult::error("not run: the run's time limit was reached".into(), "")
            } else if run.cancel.is_cancelled() {
                CallResult::error("not run: the user cancelled the turn".into(), "")
            } else {
                match tokio::time::timeout_at(
                    run.deadline,
                    self.route_model_call(run, &id, &name, &input),
                )
                .await
                {
                    Ok(r) => r,
                    Err(_) => {
                        timed_out = true;
                        CallResult::error("stopped: the run's time limit was reached".into(), "")
                    }
                }
            };
            run.em.emit(AgentEvent::ToolResult {
                id: id.clone(),
                output: r.output.clone(),
                is_error: r.is_error,
            });
            run.out.tool_calls.push(ToolCallRecord {
                id: id.clone(),
                skill: r.skill,
                tool: name,
                input,
                output: r.output.clone(),
                is_error: r.is_error,
            });
            results.push(ContentBlock::ToolResult {
                tool_use_id: id,
                content: r.output,
                is_error: r.is_error,
            });
        }
        run.messages.push(Message {
            role: Role::User,
            content: results,
        });
        if timed_out {
            return Next::Stop(StopKind::Timeout);
        }
        let max_invalid = run.options.max_invalid_tool_calls.max(1);
        if run.invalid_in_a_row >= max_invalid {
            return Next::Fail(AgentError::InvalidToolCalls {
                count: run.invalid_in_a_row,
                last: last_invalid,
            });
        }
        Next::Continue
    }

    /// Routes the model's call `id` of `name` with `input` (see
    /// [`crate::router`]).
    async fn route_model_call(
        &self,
        run: &mut Run<'_>,
        id: &str,
        name: &str,
        input: &Value,
    ) -> CallResult {
        let constraints = self.current_constraints();
        let router = ToolRouter {
            runtime: self.runtime,
            skills: self.skills,
            gate: self.gate,
            constraints: constraints.as_deref(),
        };
        let caller = Caller::Model {
            id,
            name,
            value: input,
            tools: &self.tools,
            allowlist: self.allowlist.as_deref(),
            hooks: &self.hooks,
            messages: &run.messages,
            ctx: &self.ctx,
            em: &mut run.em,
        };
        let (skill, routed) = router.route(caller, input.to_string()).await;
        let (output, is_error) = routed.model_text();
        CallResult {
            output,
            is_error,
            skill,
        }
    }
}
