//! Per-skill and per-turn budgets for the imports that cost something
//! outside the sandbox: model requests (`llm`), programs (`exec`) and HTTP
//! requests (`http`).
//!
//! One [`Budget`] lives in the [`CallContext`](crate::CallContext) and is shared by every call
//! made through it — concurrent calls of one skill, nested `skills.invoke` calls and
//! other skills — so six parallel calls of a skill draw on one counter. A turn is one
//! model turn of the agent loop (the loop calls [`Budget::start_turn`]); outside the loop
//! (`agent skill call`, `agent workflow run`, `agent security audit`) the whole command is
//! one turn. These budgets come on top of the per-call limits in [`Limits`](crate::Limits).

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use crate::bindings::types::CapabilityError;
use crate::state::HostState;

/// A kind of costly use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Use {
    /// One model request through the `llm` import.
    Llm,
    /// One program run through the `exec` import.
    Exec,
    /// One request through the `http` import (redirect hops included in it).
    Http,
}

impl Use {
    fn index(self) -> usize {
        match self {
            Use::Llm => 0,
            Use::Exec => 1,
            Use::Http => 2,
        }
    }

    /// The permission it is audited under.
    fn capability(self) -> &'static str {
        match self {
            Use::Llm => "llm:call",
            Use::Exec => "shell:exec",
            Use::Http => "net:fetch",
        }
    }

    fn noun(self) -> &'static str {
        match self {
            Use::Llm => "model requests",
            Use::Exec => "programs",
            Use::Http => "HTTP requests",
        }
    }

    /// The config keys of its per-skill and per-turn budgets.
    fn keys(self) -> (&'static str, &'static str) {
        match self {
            Use::Llm => (
                "skills.max_llm_calls_per_skill",
                "skills.max_llm_calls_per_turn",
            ),
            Use::Exec => (
                "skills.max_shell_exec_per_skill",
                "skills.max_shell_exec_per_turn",
            ),
            Use::Http => (
                "skills.max_http_requests_per_skill",
                "skills.max_http_requests_per_turn",
            ),
        }
    }
}

/// The budget of one kind of use.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct UseLimit {
    /// Uses one skill may make in one turn (all its calls together).
    pub per_skill: u32,
    /// Uses all skills together may make in one turn.
    pub per_turn: u32,
}

/// Every budget; the defaults are those of `config.toml`'s `[skills]`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct BudgetLimits {
    /// Model requests (default 5 per skill, 20 per turn).
    pub llm: UseLimit,
    /// Programs (default 10 per skill, 40 per turn).
    pub exec: UseLimit,
    /// HTTP requests (default 20 per skill, 60 per turn).
    pub http: UseLimit,
}

impl Default for BudgetLimits {
    fn default() -> Self {
        BudgetLimits {
            llm: UseLimit {
                per_skill: 5,
                per_turn: 20,
            },
            exec: UseLimit {
                per_skill: 10,
                per_turn: 40,
            },
            http: UseLimit {
                per_skill: 20,
                per_turn: 60,
            },
        }
    }
}

impl BudgetLimits {
    fn of(&self, kind: Use) -> UseLimit {
        match kind {
            Use::Llm => self.llm,
            Use::Exec => self.exec,
            Use::Http => self.http,
        }
    }
}

/// What one skill used (and was refused), per kind: `[llm, exec, http]`.
#[derive(Debug, Clone, Default, PartialEq, Eq, serde::Serialize)]
pub struct SkillUses {
    /// The skill.
    pub skill: String,
    /// Model requests made.
    pub llm: u32,
    /// Programs run.
    pub exec: u32,
    /// HTTP requests made.
    pub http: u32,
    /// Uses refused because a budget was spent.
    pub refused: u32,
}

#[derive(Debug, Default)]
struct Counts {
    /// This turn, per skill.
    skill: BTreeMap<String, [u32; 3]>,
    /// This turn, all skills.
    turn: [u32; 3],
    /// Since the budget was created, per skill: `[llm, exec, http, refused]`.
    total: BTreeMap<String, [u32; 4]>,
}

/// The shared counters. Checking and counting a use is one step under one
/// lock, so concurrent calls can never overspend.
#[derive(Debug, Default)]
pub struct Budget {
    limits: BudgetLimits,
    counts: Mutex<Counts>,
}

impl Budget {
    /// A budget with `limits`, nothing used yet.
    pub fn new(limits: BudgetLimits) -> Budget {
        Budget {
            limits,
            counts: Mutex::default(),
        }
    }

    /// The limits.
    pub fn limits(&self) -> BudgetLimits {
        self.limits
    }

    /// A new turn: the per-skill and per-turn counters start again at zero
    /// (the totals are kept).
    pub fn start_turn(&self) {
        let mut c = self.lock();
        c.skill.clear();
        c.turn = [0; 3];
    }

    /// Counts one use of `kind` by `skill`, or refuses it (counted as
    /// refused) with a message naming the budget, its size and its key.
    ///
    /// # Errors
    /// The message when the skill's or the turn's budget is spent.
    pub fn take(&self, skill: &str, kind: Use) -> Result<(), String> {
        let limit = self.limits.of(kind);
        let (skill_key, turn_key) = kind.keys();
        let i = kind.index();
        let mut c = self.lock();
        let used = c.skill.get(skill).map_or(0, |s| s[i]);
        let refusal = if used >= limit.per_skill {
            Some(format!(
                "skill `{skill}` has used its budget of {} {} this turn (raise `{skill_key}` in config.toml)",
                limit.per_skill,
                kind.noun()
            ))
        } else if c.turn[i] >= limit.per_turn {
            Some(format!(
                "the turn's budget of {} {} for all skills is used up (raise `{turn_key}` in config.toml)",
                limit.per_turn,
                kind.noun()
            ))
        } else {
            None
        };
        let total = c.total.entry(skill.to_string()).or_default();
        if let Some(message) = refusal {
            total[3] += 1;
            return Err(message);
        }
        total[i] += 1;
        c.skill.entry(skill.to_string()).or_default()[i] += 1;
        c.turn[i] += 1;
        Ok(())
    }

    /// What each skill used since the budget was created, by skill name.
    pub fn totals(&self) -> Vec<SkillUses> {
        self.lock()
            .total
            .iter()
            .map(|(skill, t)| SkillUses {
                skill: skill.clone(),
                llm: t[Use::Llm.index()],
                exec: t[Use::Exec.index()],
                http: t[Use::Http.index()],
                refused: t[3],
            })
            .collect()
    }

    /// What each skill used since `before` (an earlier [`Budget::totals`]),
    /// skills that used nothing left out.
    pub fn since(&self, before: &[SkillUses]) -> Vec<SkillUses> {
        self.totals()
            .into_iter()
            .map(|now| match before.iter().find(|b| b.skill == now.skill) {
                Some(b) => SkillUses {
                    skill: now.skill,
                    llm: now.llm - b.llm,
                    exec: now.exec - b.exec,
                    http: now.http - b.http,
                    refused: now.refused - b.refused,
                },
                None => now,
            })
            .filter(|u| u.llm + u.exec + u.http + u.refused > 0)
            .collect()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Counts> {
        self.counts.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

impl SkillUses {
    /// `core-tools: 2 model requests, 1 program, 0 HTTP requests (3 refused)`.
    pub fn summary(&self) -> String {
        let refused = if self.refused > 0 {
            format!(" ({} refused: budget spent)", self.refused)
        } else {
            String::new()
        };
        format!(
            "{}: {} model requests, {} programs, {} HTTP requests{refused}",
            self.skill, self.llm, self.exec, self.http
        )
    }
}

impl HostState {
    /// Spends one `kind` use of this skill's and this turn's budgets; a
    /// refusal is audited (`target`: what was about to be done) and returned
    /// as the import's `limit-exceeded` error.
    pub(crate) fn spend(&self, kind: Use, target: &str) -> Result<(), CapabilityError> {
        self.ctx
            .budget
            .take(&self.skill.name, kind)
            .map_err(|message| {
                self.record_use(kind.capability(), target, "refused: budget spent");
                CapabilityError::LimitExceeded(message)
            })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn small() -> Budget {
        let l = UseLimit {
            per_skill: 2,
            per_turn: 3,
        };
        Budget::new(BudgetLimits {
            llm: l,
            exec: l,
            http: l,
        })
    }

    #[test]
    fn a_skill_and_a_turn_each_have_their_budget_until_the_next_turn() {
        let b = small();
        assert!(b.take("a", Use::Llm).is_ok());
        assert!(b.take("a", Use::Llm).is_ok());
        let e = b.take("a", Use::Llm).unwrap_err();
        assert!(
            e.contains("budget of 2 model requests") && e.contains("max_llm_calls_per_skill"),
            "{e}"
        );
        assert!(b.take("a", Use::Exec).is_ok(), "kinds are counted apart");
        assert!(b.take("b", Use::Llm).is_ok());
        let e = b.take("c", Use::Llm).unwrap_err();
        assert!(
            e.contains("turn's budget of 3 model requests") && e.contains("max_llm_calls_per_turn"),
            "{e}"
        );
        b.start_turn();
        assert!(b.take("a", Use::Llm).is_ok());
        let totals = b.totals();
        let a = totals.iter().find(|u| u.skill == "a").expect("a");
        assert_eq!((a.llm, a.exec, a.refused), (3, 1, 1));
        assert_eq!(b.since(&totals), Vec::new());
    }
}
