//! SKILL.md skills in a session, as host tools (agent-core's `HostToolSource`):
//!
//! - the system prompt lists only each offered skill's name and description (progressive
//!   disclosure); the body is loaded when the model calls `load_skill`, when the user types
//!   `/name args` (the body then joins that turn's system prompt), or with `--skills NAME`;
//! - `read_skill_file` reads a file of a skill's own directory, nothing outside it;
//! - `save_skill` (asks for approval) writes `<user skills>/<name>/SKILL.md` and resources;
//! - a loaded skill's `allowed_tools` is a constraint of that skill from then on — within the
//!   same turn too (the turn asks [`HostToolSource::constraints`] again after each call) —
//!   merged with the components' constraints by agent-policy; its `model:` is the model of
//!   the turn's requests from then on (`/name`: the whole turn; `--skills NAME`: every turn);
//! - a `context: fork` skill runs as a sub-agent of the turn (agent-core's `Forker`): its
//!   body is the task of a fresh conversation, and only the answer comes back — as
//!   `load_skill`'s result, or as the turn's context for `/name` and `--skills NAME`.
//!
//! Each body is scanned before it is loaded and its `!` lines run only with the grant
//! (`crate::instructions::load_body`). The tools themselves are in `calls`.

mod calls;

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::{Forker, HostFuture, HostOffer, HostTool, HostToolSource};
use agent_policy::{Constraints, SkillConstraint};
use agent_runtime::{CallContext, Runtime};
use agent_store::AgentPaths;

use crate::instructions::{Discoverer, Instruction, Instructions};
use calls::{InstructionTool, Invoked, Kind, invoke};

/// The owner the tools are offered under (constraints, approvals and events name it).
pub const OWNER: &str = "instructions";

struct Shared {
    discoverer: Discoverer,
    paths: AgentPaths,
    runtime: Arc<Runtime>,
    ctx: Arc<CallContext>,
    /// Where `save_skill` writes (the user's skills directory).
    store_dir: PathBuf,
    /// Skills loaded in this session, with their `allowed_tools`.
    loaded: Mutex<Vec<(String, Option<Vec<String>>)>>,
    /// Whether broken SKILL.md files were reported (once per session).
    reported: Mutex<bool>,
    /// The running turn's sub-agents (bound before each turn's offer).
    forker: Mutex<Option<Arc<dyn Forker>>>,
    /// The model of the turn's next requests, while a loaded skill asks for one.
    turn_model: Mutex<Option<String>>,
    /// The `model:` of a `--skills NAME` skill: every turn's from its start.
    preloaded_model: Option<String>,
    /// `--skills NAME` skills to invoke at the first turn, with their arguments: the task
    /// of `agent run` for `context: fork` skills (run as sub-agents, their answers that
    /// turn's context), or `None` in the interface, which has no task yet: then every
    /// named skill is invoked with the first message as its arguments.
    pending_named: Mutex<Vec<(String, Option<String>)>>,
}

impl Shared {
    /// The loaded skills' `allowed_tools`, each a constraint named after its skill.
    fn constraints(&self) -> Vec<SkillConstraint> {
        let loaded = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        loaded
            .iter()
            .filter_map(|(name, allowed)| {
                let allowed = allowed.as_ref()?;
                Some(SkillConstraint {
                    skill: name.clone(),
                    priority: 0,
                    constraints: Constraints {
                        allowed_tools: Some(allowed.iter().cloned().collect::<BTreeSet<_>>()),
                        ..Constraints::default()
                    },
                })
            })
            .collect()
    }

    fn mark_loaded(&self, inst: &Instruction) {
        let mut l = self.loaded.lock().unwrap_or_else(PoisonError::into_inner);
        if !l.iter().any(|(n, _)| n == inst.name()) {
            l.push((
                inst.name().to_string(),
                inst.skill.front.allowed_tools.clone(),
            ));
        }
    }
}

/// The session's source of instruction-skill tools.
pub struct InstructionSource {
    shared: Arc<Shared>,
    tools: Vec<Arc<dyn HostTool>>,
}

impl InstructionSource {
    /// A source over `discoverer`'s skills; `preloaded`: skills whose body `--skills NAME`
    /// already sent (their `allowed_tools` and `model:` apply from the first turn);
    /// `first_turn`: `--skills NAME` skills invoked at the first turn, with their
    /// arguments (`None`: the first message).
    pub fn new(
        discoverer: Discoverer,
        paths: AgentPaths,
        runtime: Arc<Runtime>,
        ctx: Arc<CallContext>,
        preloaded: &[String],
        first_turn: Vec<(String, Option<String>)>,
    ) -> InstructionSource {
        let store_dir = paths.user_skills_dir();
        let found = discoverer.discover();
        let preloaded: Vec<&Instruction> = preloaded.iter().filter_map(|n| found.get(n)).collect();
        let shared = Arc::new(Shared {
            discoverer,
            paths,
            runtime,
            ctx,
            store_dir,
            loaded: Mutex::new(Vec::new()),
            reported: Mutex::new(false),
            forker: Mutex::new(None),
            turn_model: Mutex::new(None),
            preloaded_model: preloaded.iter().find_map(|i| i.skill.front.model.clone()),
            pending_named: Mutex::new(first_turn),
        });
        for inst in preloaded {
            shared.mark_loaded(inst);
        }
        let tools: Vec<Arc<dyn HostTool>> = [Kind::Load, Kind::Read, Kind::Save]
            .into_iter()
            .map(|k| Arc::new(InstructionTool::new(shared.clone(), k)) as Arc<dyn HostTool>)
            .collect();
        InstructionSource { shared, tools }
    }
}

/// Whether the model may load it: offered here and not kept from the model.
fn model_may_load(inst: &Instruction) -> bool {
    inst.ineligible.is_empty() && !inst.skill.front.disable_model_invocation
}

fn listing(found: &Instructions) -> Option<String> {
    let offered: Vec<&Instruction> = found.skills.iter().filter(|i| model_may_load(i)).collect();
    if offered.is_empty() {
        return None;
    }
    let mut text = String::from(
        "## Skills\nInstruction skills you can use: when a task matches a skill's description, call `load_skill` with its name (and the task's details as `arguments`) to get its instructions, then follow them. A skill's own files are read with `read_skill_file`.\n",
    );
    for i in offered {
        text.push_str(&format!(
            "- {}: {}\n",
            i.name(),
            i.skill.front.description.replace('\n', " ")
        ));
    }
    Some(text)
}

impl HostToolSource for InstructionSource {
    fn offer<'a>(&'a self, message: &'a str) -> HostFuture<'a, HostOffer> {
        Box::pin(async move {
            *self
                .shared
                .turn_model
                .lock()
                .unwrap_or_else(PoisonError::into_inner) = self.shared.preloaded_model.clone();
            let found = self.shared.discoverer.discover();
            let mut offer = HostOffer::default();
            {
                let mut reported = self
                    .shared
                    .reported
                    .lock()
                    .unwrap_or_else(PoisonError::into_inner);
                if !*reported {
                    *reported = true;
                    offer.warnings.extend(
                        found
                            .broken
                            .iter()
                            .map(|b| format!("skipping SKILL.md skill: {b}")),
                    );
                }
            }
            if found.skills.is_empty() {
                return offer;
            }
            let mut prompt = listing(&found).unwrap_or_default();
            prompt.push_str(
                &self
                    .pending_named(&found, message, &mut offer.warnings)
                    .await,
            );
            if let Some(section) = self
                .user_invocation(&found, message, &mut offer.warnings)
                .await
            {
                prompt.push_str(&section);
            }
            if !prompt.is_empty() {
                offer.prompt = Some(prompt);
            }
            offer.tools = self.tools.clone();
            offer
        })
    }

    fn constraints(&self) -> Vec<SkillConstraint> {
        self.shared.constraints()
    }

    fn model(&self) -> Option<String> {
        self.shared
            .turn_model
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn bind_forker(&self, forker: Arc<dyn Forker>) {
        *self
            .shared
            .forker
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some(forker);
    }
}

impl InstructionSource {
    /// `--skills NAME` skills, at the first turn: each one's body, or its sub-agent's
    /// answer, as sections of that turn's system prompt.
    async fn pending_named(
        &self,
        found: &Instructions,
        message: &str,
        warnings: &mut Vec<String>,
    ) -> String {
        let pending = std::mem::take(
            &mut *self
                .shared
                .pending_named
                .lock()
                .unwrap_or_else(PoisonError::into_inner),
        );
        let mut out = String::new();
        for (name, args) in pending {
            let Some(inst) = found.get(&name) else {
                warnings.push(format!("--skills {name}: no longer found; not run"));
                continue;
            };
            let args = args.unwrap_or_else(|| message.trim().to_string());
            match invoke(&self.shared, inst, &args, warnings).await {
                Ok(invoked) => out.push_str(&section(&name, "named with --skills", invoked)),
                Err(e) => warnings.push(format!("--skills {name}: {e}")),
            }
        }
        out
    }

    /// `/name args` typed by the user: the skill's body for this turn's system prompt.
    async fn user_invocation(
        &self,
        found: &Instructions,
        message: &str,
        warnings: &mut Vec<String>,
    ) -> Option<String> {
        let rest = message.trim_start().strip_prefix('/')?;
        let (name, args) = rest.split_once(char::is_whitespace).unwrap_or((rest, ""));
        let Some(inst) = found.get(name) else {
            warnings.push(format!(
                "/{name}: no instruction skill of that name (`agent skill list`); the message was sent as typed"
            ));
            return None;
        };
        if !inst.skill.front.user_invocable {
            warnings.push(format!(
                "/{name}: this skill is not user-invocable (user-invocable: false)"
            ));
            return None;
        }
        if !inst.ineligible.is_empty() {
            warnings.push(format!(
                "/{name}: not offered here: {}",
                inst.ineligible.join("; ")
            ));
            return None;
        }
        match invoke(&self.shared, inst, args.trim(), warnings).await {
            Ok(invoked) => Some(section(
                name,
                &format!("invoked by the user with /{name}"),
                invoked,
            )),
            Err(e) => {
                warnings.push(format!("/{name}: {e}"));
                None
            }
        }
    }
}

/// A loaded skill as a section of the turn's system prompt: its body, or its sub-agent's
/// answer.
fn section(name: &str, how: &str, invoked: Invoked) -> String {
    match invoked {
        Invoked::Inline(body) => format!("\n## Skill `{name}` ({how})\n{body}"),
        Invoked::Forked(answer) => format!(
            "\n## Skill `{name}` ({how}; it ran as a sub-agent, context: fork)\nIts answer:\n{answer}\n"
        ),
    }
}

/// Puts SKILL.md skills into a session's parts: `--skills NAME` naming one loads its body
/// now when `task` is given (`agent run`: the task is `$ARGUMENTS`; returned as attachments
/// of the first message) and is taken out of the components' explicit list; without a task
/// (the interface) it is invoked at the first turn with the first message as its arguments.
/// `context: fork` skills run as sub-agents at the first turn. The session gets the
/// [`InstructionSource`].
///
/// # Errors
/// A broken configuration, or a `--skills NAME` skill refused by the content scan or not
/// offered here.
pub fn attach(
    app: &mut crate::app::App,
    parts: &mut agent_core::session::SessionParts,
    task: Option<&str>,
) -> anyhow::Result<Vec<agent_protocol::Attachment>> {
    let components: Vec<String> = parts.skills.iter().map(|s| s.name().to_string()).collect();
    let discoverer = Discoverer::new(app, &components)?;
    let found = discoverer.discover();
    let named: Vec<String> = parts
        .explicit
        .iter()
        .filter(|n| found.get(n).is_some())
        .cloned()
        .collect();
    // Invoked at the first turn rather than attached to the task: `context: fork` skills
    // (they run as sub-agents) and, in the interface, which has no task yet, every named
    // skill (its arguments are the first message).
    let is_fork = |name: &String| {
        found
            .get(name)
            .is_some_and(|i| i.skill.front.context == agent_instructions::Context::Fork)
    };
    let mut first_turn: Vec<(String, Option<String>)> = Vec::new();
    for name in &named {
        if task.is_some() && !is_fork(name) {
            continue;
        }
        if let Some(inst) = found.get(name)
            && !inst.ineligible.is_empty()
        {
            anyhow::bail!(
                "--skills {name}: not offered here: {}",
                inst.ineligible.join("; ")
            );
        }
        first_turn.push((name.clone(), task.map(str::to_string)));
    }
    parts
        .explicit
        .retain(|n| !first_turn.iter().any(|(f, _)| f == n));
    let attachments = match task {
        Some(task) => crate::instructions::explicit_attachments(
            app,
            &mut parts.explicit,
            &parts.runtime,
            &parts.ctx,
            task,
        )?,
        None => Vec::new(),
    };
    // Inline skills named with --skills: their `allowed_tools` and `model:` apply from the
    // first turn.
    let preloaded: Vec<String> = named.into_iter().filter(|n| !is_fork(n)).collect();
    parts.host_tools.push(Arc::new(InstructionSource::new(
        discoverer,
        app.paths.clone(),
        parts.runtime.clone(),
        parts.ctx.clone(),
        &preloaded,
        first_turn,
    )));
    Ok(attachments)
}
