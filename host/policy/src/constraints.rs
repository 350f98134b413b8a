//! Skills as behaviour constraints: merging what several active skills demand.
//!
//! Each active skill contributes a [`SkillConstraint`]: a whitelist of tools (or none), a
//! blacklist, step and time limits and context values. [`merge`] combines them into one
//! [`Merged`] with fixed, order-independent rules:
//!
//! - skills are processed by priority, highest first, then by skill name (then by their
//!   constraints, so even duplicates are ordered);
//! - allowed tools are **intersected** (`None` = unrestricted, and skills without a whitelist
//!   do not take part);
//! - forbidden tools are **united**;
//! - **deny overrides allow**: a tool both allowed and forbidden is forbidden;
//! - `max_steps` and `max_duration` are the **minimum** of the limits given;
//! - context values: the first skill in processing order that sets a key wins (higher priority
//!   wins; on equal priority the alphabetically first skill name wins).
//!
//! [`Merged`] keeps, for every tool and every limit, the skill(s) that caused it, so that
//! [`Merged::reasons`] can explain the outcome (`--verbose`) and [`Merged::check_tool`] can tell
//! the model *why* a tool is refused.
//!
//! Custom validators (functions run before each tool call) are not modelled here: they are
//! code, not data, and are ANDed by the caller.

use std::cmp::Ordering;
use std::collections::{BTreeMap, BTreeSet};
use std::fmt;
use std::time::Duration;

/// The restrictions one skill puts on the agent.
#[derive(Debug, Clone, Default, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Constraints {
    /// Whitelist of tools; `None` means no restriction.
    pub allowed_tools: Option<BTreeSet<String>>,
    /// Blacklist of tools.
    pub forbidden_tools: BTreeSet<String>,
    /// Maximum number of steps; `None` means no restriction.
    pub max_steps: Option<u32>,
    /// Maximum wall time; `None` means no restriction.
    pub max_duration: Option<Duration>,
    /// Key/value pairs injected into the agent's context.
    pub context: BTreeMap<String, String>,
}

/// One active skill's constraints, with the identity used to order and explain them.
#[derive(Debug, Clone, Default, PartialEq, Eq, Hash)]
pub struct SkillConstraint {
    /// The skill's identifier (e.g. `security_policy`).
    pub skill: String,
    /// Higher number = higher priority.
    pub priority: i32,
    /// What the skill demands.
    pub constraints: Constraints,
}

/// A skill named in a decision: its identifier and priority.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Source {
    /// The skill's identifier.
    pub skill: String,
    /// The skill's priority.
    pub priority: i32,
}

impl fmt::Display for Source {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "`{}` (priority {})", self.skill, self.priority)
    }
}

/// A merged limit: the minimum value and the skill(s) that gave exactly that value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Limit<T> {
    /// The effective (minimum) value.
    pub value: T,
    /// The skills whose limit equals `value`, in processing order.
    pub set_by: Vec<Source>,
}

/// A merged context value and where it came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContextEntry {
    /// The effective value.
    pub value: String,
    /// The skill whose value won.
    pub set_by: Source,
    /// Lower-ranked skills that also set the key, with the values that lost.
    pub overridden: Vec<(Source, String)>,
}

/// The result of [`merge`]: the effective constraints and the reasons for them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Merged {
    /// All input skills, in processing order.
    order: Vec<Source>,
    /// Skills that gave a whitelist, in processing order.
    allow_sources: Vec<Source>,
    /// Intersection of whitelists, before deny-overrides-allow; `None` = unrestricted.
    intersection: Option<BTreeSet<String>>,
    /// Every forbidden tool and the skills that forbid it, in processing order.
    forbidden: BTreeMap<String, Vec<Source>>,
    max_steps: Option<Limit<u32>>,
    max_duration: Option<Limit<Duration>>,
    context: BTreeMap<String, ContextEntry>,
}

fn rank(a: &SkillConstraint, b: &SkillConstraint) -> Ordering {
    b.priority
        .cmp(&a.priority)
        .then_with(|| a.skill.cmp(&b.skill))
        .then_with(|| a.constraints.cmp(&b.constraints))
}

fn source(input: &SkillConstraint) -> Source {
    Source {
        skill: input.skill.clone(),
        priority: input.priority,
    }
}

fn min_limit<T: Ord + Copy>(
    sorted: &[&SkillConstraint],
    get: impl Fn(&Constraints) -> Option<T>,
) -> Option<Limit<T>> {
    let value = sorted.iter().filter_map(|s| get(&s.constraints)).min()?;
    let set_by = sorted
        .iter()
        .filter(|s| get(&s.constraints) == Some(value))
        .map(|s| source(s))
        .collect();
    Some(Limit { value, set_by })
}

/// Merges the constraints of the active skills. The result does not depend on input order.
pub fn merge(inputs: &[SkillConstraint]) -> Merged {
    let mut sorted: Vec<&SkillConstraint> = inputs.iter().collect();
    sorted.sort_by(|a, b| rank(a, b));

    let mut allow_sources = Vec::new();
    let mut intersection: Option<BTreeSet<String>> = None;
    let mut forbidden: BTreeMap<String, Vec<Source>> = BTreeMap::new();
    let mut context: BTreeMap<String, ContextEntry> = BTreeMap::new();

    for input in &sorted {
        let c = &input.constraints;
        if let Some(allowed) = &c.allowed_tools {
            allow_sources.push(source(input));
            intersection = Some(match intersection {
                None => allowed.clone(),
                Some(acc) => acc.intersection(allowed).cloned().collect(),
            });
        }
        for tool in &c.forbidden_tools {
            forbidden
                .entry(tool.clone())
                .or_default()
                .push(source(input));
        }
        for (key, value) in &c.context {
            match context.get_mut(key) {
                Some(entry) => entry.overridden.push((source(input), value.clone())),
                None => {
                    context.insert(
                        key.clone(),
                        ContextEntry {
                            value: value.clone(),
                            set_by: source(input),
                            overridden: Vec::new(),
                        },
                    );
                }
            }
        }
    }

    Merged {
        order: sorted.iter().map(|s| source(s)).collect(),
        allow_sources,
        intersection,
        forbidden,
        max_steps: min_limit(&sorted, |c| c.max_steps),
        max_duration: min_limit(&sorted, |c| c.max_duration),
        context,
    }
}

fn join_names(sources: &[Source], sep: &str) -> String {
    sources
        .iter()
        .map(|s| format!("`{}`", s.skill))
        .collect::<Vec<_>>()
        .join(sep)
}

fn join_sources(sources: &[Source]) -> String {
    sources
        .iter()
        .map(Source::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

fn skills_word(n: usize) -> &'static str {
    if n == 1 { "skill" } else { "skills" }
}

fn join_set<'a>(tools: impl IntoIterator<Item = &'a String>) -> String {
    let list: Vec<&str> = tools.into_iter().map(String::as_str).collect();
    if list.is_empty() {
        "(none)".to_owned()
    } else {
        list.join(", ")
    }
}

impl Merged {
    /// The input skills in processing order (priority descending, then name).
    pub fn skills(&self) -> &[Source] {
        &self.order
    }

    /// The tools that may be used (whitelist intersection minus forbidden tools);
    /// `None` means no whitelist applies (any tool not forbidden may be used).
    pub fn allowed_tools(&self) -> Option<BTreeSet<String>> {
        self.intersection.as_ref().map(|set| {
            set.iter()
                .filter(|t| !self.forbidden.contains_key(*t))
                .cloned()
                .collect()
        })
    }

    /// Every forbidden tool, with the skills that forbid it (in processing order).
    pub fn forbidden_tools(&self) -> &BTreeMap<String, Vec<Source>> {
        &self.forbidden
    }

    /// Tools that the whitelists allow but that are forbidden anyway (deny overrides allow).
    pub fn overridden_tools(&self) -> BTreeSet<String> {
        self.intersection
            .iter()
            .flatten()
            .filter(|t| self.forbidden.contains_key(*t))
            .cloned()
            .collect()
    }

    /// The skills whose whitelists were intersected, in processing order.
    pub fn allow_sources(&self) -> &[Source] {
        &self.allow_sources
    }

    /// The merged step limit and the skill(s) that set it.
    pub fn max_steps(&self) -> Option<&Limit<u32>> {
        self.max_steps.as_ref()
    }

    /// The merged time limit and the skill(s) that set it.
    pub fn max_duration(&self) -> Option<&Limit<Duration>> {
        self.max_duration.as_ref()
    }

    /// The merged context values with their origins.
    pub fn context(&self) -> &BTreeMap<String, ContextEntry> {
        &self.context
    }

    /// The effective constraints as plain data (without the reasons).
    pub fn constraints(&self) -> Constraints {
        Constraints {
            allowed_tools: self.allowed_tools(),
            forbidden_tools: self.forbidden.keys().cloned().collect(),
            max_steps: self.max_steps.as_ref().map(|l| l.value),
            max_duration: self.max_duration.as_ref().map(|l| l.value),
            context: self
                .context
                .iter()
                .map(|(k, e)| (k.clone(), e.value.clone()))
                .collect(),
        }
    }

    /// Whether `tool` may be used; the error says why not, naming the responsible skills.
    pub fn check_tool(&self, tool: &str) -> Result<(), String> {
        if let Some(by) = self.forbidden.get(tool) {
            let mut msg = format!(
                "tool `{tool}` is forbidden by {} {}",
                skills_word(by.len()),
                join_sources(by)
            );
            if self.intersection.as_ref().is_some_and(|s| s.contains(tool)) {
                msg.push_str(&format!(
                    " (it is allowed by {}, but deny overrides allow)",
                    join_names(&self.allow_sources, " ∩ ")
                ));
            }
            return Err(msg);
        }
        match &self.intersection {
            Some(set) if !set.contains(tool) => {
                let mut msg = format!(
                    "tool `{tool}` is not in the tools allowed by {}",
                    join_names(&self.allow_sources, " ∩ ")
                );
                let allowed = self.allowed_tools().unwrap_or_default();
                msg.push_str(&format!(" (allowed: {})", join_set(&allowed)));
                Err(msg)
            }
            _ => Ok(()),
        }
    }

    /// Human-readable decision lines, for `--verbose` and audit.
    pub fn reasons(&self) -> Vec<String> {
        let mut out = Vec::new();
        if self.order.is_empty() {
            out.push("no skill constraints: everything unrestricted".to_owned());
        } else {
            out.push(format!(
                "skills in order of precedence: {}",
                join_sources(&self.order)
            ));
        }

        match &self.intersection {
            None => out.push("allowed tools: unrestricted (no skill gives a whitelist)".to_owned()),
            Some(set) => {
                out.push(format!(
                    "allowed tools = {}: {}",
                    join_names(&self.allow_sources, " ∩ "),
                    join_set(set)
                ));
                for tool in set {
                    if let Some(by) = self.forbidden.get(tool) {
                        out.push(format!(
                            "tool `{tool}` is allowed by {} but forbidden by {}: deny overrides allow",
                            join_names(&self.allow_sources, " ∩ "),
                            join_sources(by)
                        ));
                    } else {
                        out.push(format!(
                            "tool `{tool}` is allowed: listed by {} {}",
                            skills_word(self.allow_sources.len()),
                            join_sources(&self.allow_sources)
                        ));
                    }
                }
            }
        }

        for (tool, by) in &self.forbidden {
            out.push(format!(
                "tool `{tool}` is forbidden by {} {}",
                skills_word(by.len()),
                join_sources(by)
            ));
        }

        match &self.max_steps {
            None => out.push("max steps: unrestricted".to_owned()),
            Some(l) => out.push(format!(
                "max steps = {} (minimum), set by {} {}",
                l.value,
                skills_word(l.set_by.len()),
                join_sources(&l.set_by)
            )),
        }
        match &self.max_duration {
            None => out.push("max duration: unrestricted".to_owned()),
            Some(l) => out.push(format!(
                "max duration = {:?} (minimum), set by {} {}",
                l.value,
                skills_word(l.set_by.len()),
                join_sources(&l.set_by)
            )),
        }

        for (key, entry) in &self.context {
            let mut line = format!(
                "context `{key}` = `{}`, set by skill {}",
                entry.value, entry.set_by
            );
            for (src, value) in &entry.overridden {
                line.push_str(&format!("; overrides `{value}` from {src}"));
            }
            out.push(line);
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn set(items: &[&str]) -> BTreeSet<String> {
        items.iter().map(|s| (*s).to_owned()).collect()
    }

    /// Section 4.1 of the design: `CodeReviewSkill`.
    fn code_review() -> SkillConstraint {
        SkillConstraint {
            skill: "code_review".into(),
            priority: 10,
            constraints: Constraints {
                allowed_tools: Some(set(&[
                    "code_analyzer",
                    "syntax_checker",
                    "linter",
                    "security_scanner",
                ])),
                forbidden_tools: set(&["file_writer", "code_modifier"]),
                max_steps: Some(5),
                max_duration: None,
                context: BTreeMap::from([
                    ("review_mode".to_owned(), "true".to_owned()),
                    (
                        "focus_areas".to_owned(),
                        r#"["security","performance","maintainability"]"#.to_owned(),
                    ),
                ]),
            },
        }
    }

    /// Section 4.2 of the design: `SecurityPolicySkill` (its custom validator is not data).
    fn security_policy() -> SkillConstraint {
        SkillConstraint {
            skill: "security_policy".into(),
            priority: 100,
            constraints: Constraints {
                allowed_tools: None,
                forbidden_tools: set(&[
                    "file_deleter",
                    "system_command",
                    "database_writer",
                    "network_request",
                ]),
                max_steps: None,
                max_duration: Some(Duration::from_secs(5 * 60)),
                context: BTreeMap::new(),
            },
        }
    }

    fn third() -> SkillConstraint {
        SkillConstraint {
            skill: "ops".into(),
            priority: 10,
            constraints: Constraints {
                allowed_tools: Some(set(&["linter", "system_command", "deploy"])),
                forbidden_tools: set(&["code_analyzer"]),
                max_steps: Some(5),
                max_duration: Some(Duration::from_secs(60)),
                context: BTreeMap::from([("review_mode".to_owned(), "false".to_owned())]),
            },
        }
    }

    #[test]
    fn seed_examples_merge_to_expected_result() {
        let merged = merge(&[code_review(), security_policy()]);
        let expected = Constraints {
            allowed_tools: Some(set(&[
                "code_analyzer",
                "syntax_checker",
                "linter",
                "security_scanner",
            ])),
            forbidden_tools: set(&[
                "file_writer",
                "code_modifier",
                "file_deleter",
                "system_command",
                "database_writer",
                "network_request",
            ]),
            max_steps: Some(5),
            max_duration: Some(Duration::from_secs(300)),
            context: code_review().constraints.context,
        };
        assert_eq!(merged.constraints(), expected);
        let names: Vec<&str> = merged.skills().iter().map(|s| s.skill.as_str()).collect();
        assert_eq!(names, ["security_policy", "code_review"]);
        assert_eq!(merged.max_steps().unwrap().set_by[0].skill, "code_review");
        assert_eq!(
            merged.max_duration().unwrap().set_by[0].skill,
            "security_policy"
        );
        assert!(merged.check_tool("linter").is_ok());
        assert!(merged.overridden_tools().is_empty());
    }

    #[test]
    fn order_independent_over_all_permutations() {
        let items = [code_review(), security_policy(), third()];
        let perms = [
            [0, 1, 2],
            [0, 2, 1],
            [1, 0, 2],
            [1, 2, 0],
            [2, 0, 1],
            [2, 1, 0],
        ];
        let first = merge(&items);
        for p in perms {
            let input: Vec<SkillConstraint> = p.iter().map(|&i| items[i].clone()).collect();
            let m = merge(&input);
            assert_eq!(m, first);
            assert_eq!(m.reasons(), first.reasons());
        }
        // Equal priority: `code_review` sorts before `ops`, so its context value wins.
        let c = &first.context()["review_mode"];
        assert_eq!(c.value, "true");
        assert_eq!(c.set_by.skill, "code_review");
        assert_eq!(c.overridden[0].0.skill, "ops");
        // Intersection of both whitelists, minus `code_analyzer` forbidden by `ops`.
        assert_eq!(first.allowed_tools(), Some(set(&["linter"])));
    }

    #[test]
    fn deny_overrides_allow() {
        let a = SkillConstraint {
            skill: "a".into(),
            priority: 1,
            constraints: Constraints {
                allowed_tools: Some(set(&["file_writer", "calculator"])),
                ..Constraints::default()
            },
        };
        let b = SkillConstraint {
            skill: "b".into(),
            priority: 50,
            constraints: Constraints {
                forbidden_tools: set(&["file_writer"]),
                ..Constraints::default()
            },
        };
        let m = merge(&[a, b]);
        assert_eq!(m.allowed_tools(), Some(set(&["calculator"])));
        assert_eq!(m.overridden_tools(), set(&["file_writer"]));
        assert_eq!(
            m.check_tool("file_writer").unwrap_err(),
            "tool `file_writer` is forbidden by skill `b` (priority 50) \
             (it is allowed by `a`, but deny overrides allow)"
        );
        assert!(m.check_tool("calculator").is_ok());
        assert!(
            m.reasons()
                .iter()
                .any(|r| r.contains("deny overrides allow"))
        );
    }

    #[test]
    fn limits_are_minimum_with_reason() {
        let m = merge(&[code_review(), security_policy(), third()]);
        let steps = m.max_steps().unwrap();
        assert_eq!(steps.value, 5);
        let by: Vec<&str> = steps.set_by.iter().map(|s| s.skill.as_str()).collect();
        assert_eq!(by, ["code_review", "ops"]);
        let time = m.max_duration().unwrap();
        assert_eq!(time.value, Duration::from_secs(60));
        assert_eq!(time.set_by.len(), 1);
        assert_eq!(time.set_by[0].skill, "ops");
        let reasons = m.reasons();
        assert!(reasons.contains(
            &"max steps = 5 (minimum), set by skills `code_review` (priority 10), `ops` (priority 10)"
                .to_owned()
        ));
        assert!(reasons.contains(
            &"max duration = 60s (minimum), set by skill `ops` (priority 10)".to_owned()
        ));
    }

    #[test]
    fn empty_input_is_unrestricted() {
        let m = merge(&[]);
        assert_eq!(m.constraints(), Constraints::default());
        assert!(m.allowed_tools().is_none());
        assert!(m.max_steps().is_none());
        assert!(m.max_duration().is_none());
        assert!(m.check_tool("anything").is_ok());
        assert!(m.reasons()[0].contains("unrestricted"));
    }

    #[test]
    fn check_tool_messages() {
        let mut sec = security_policy();
        sec.skill = "security-policy".into();
        sec.constraints.forbidden_tools.insert("exec".into());
        sec.constraints.allowed_tools = Some(set(&["linter", "exec", "x_other"]));
        let mut review = code_review();
        review.skill = "code-review".into();
        let m = merge(&[sec, review]);
        assert_eq!(
            m.check_tool("system_command").unwrap_err(),
            "tool `system_command` is forbidden by skill `security-policy` (priority 100)"
        );
        assert_eq!(
            m.check_tool("x").unwrap_err(),
            "tool `x` is not in the tools allowed by `security-policy` ∩ `code-review` \
             (allowed: linter)"
        );
        assert!(
            m.check_tool("exec")
                .unwrap_err()
                .starts_with("tool `exec` is forbidden by skill `security-policy` (priority 100)")
        );
        assert!(m.check_tool("linter").is_ok());

        let both = merge(&[
            SkillConstraint {
                skill: "a".into(),
                priority: 1,
                constraints: Constraints {
                    forbidden_tools: set(&["rm"]),
                    ..Constraints::default()
                },
            },
            SkillConstraint {
                skill: "b".into(),
                priority: 2,
                constraints: Constraints {
                    forbidden_tools: set(&["rm"]),
                    ..Constraints::default()
                },
            },
        ]);
        assert_eq!(
            both.check_tool("rm").unwrap_err(),
            "tool `rm` is forbidden by skills `b` (priority 2), `a` (priority 1)"
        );
    }
}
