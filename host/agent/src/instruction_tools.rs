//! SKILL.md skills in a session, as host tools (agent-core's `HostToolSource`):
//!
//! - the system prompt lists only each offered skill's name and description (progressive
//!   disclosure); the body is loaded when the model calls `load_skill`, when the user types
//!   `/name args` (the body then joins that turn's system prompt), or with `--skills NAME`;
//! - `read_skill_file` reads a file of a skill's own directory, nothing outside it;
//! - `save_skill` (asks for approval) writes `<user skills>/<name>/SKILL.md` and resources;
//! - a loaded skill's `allowed_tools` is a constraint of that skill from then on (merged with
//!   the components' constraints by agent-policy).
//!
//! Each body is scanned before it is loaded and its `!` lines run only with the grant
//! (`crate::instructions::load_body`).

use std::collections::BTreeSet;
use std::path::PathBuf;
use std::sync::{Arc, Mutex, PoisonError};

use agent_core::{HostFuture, HostOffer, HostTool, HostToolSource};
use agent_instructions::SaveRequest;
use agent_policy::{Constraints, SkillConstraint};
use agent_runtime::{CallContext, Runtime, SkillError, ToolOutput, ToolSpec};
use agent_store::AgentPaths;
use serde_json::{Value, json};

use crate::instructions::{Discoverer, Instruction, Instructions, audit_at, load_body};

/// The owner the tools are offered under (constraints, approvals and events name it).
pub const OWNER: &str = "instructions";

/// Largest file `read_skill_file` returns.
const MAX_READ: u64 = 256 * 1024;

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
}

impl Shared {
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
    /// already sent (their `allowed_tools` apply from the first turn).
    pub fn new(
        discoverer: Discoverer,
        paths: AgentPaths,
        runtime: Arc<Runtime>,
        ctx: Arc<CallContext>,
        preloaded: &[String],
    ) -> InstructionSource {
        let store_dir = paths.user_skills_dir();
        let shared = Arc::new(Shared {
            discoverer,
            paths,
            runtime,
            ctx,
            store_dir,
            loaded: Mutex::new(Vec::new()),
            reported: Mutex::new(false),
        });
        let found = shared.discoverer.discover();
        for name in preloaded {
            if let Some(inst) = found.get(name) {
                shared.mark_loaded(inst);
            }
        }
        let tools: Vec<Arc<dyn HostTool>> = vec![
            Arc::new(LoadSkill::new(shared.clone())),
            Arc::new(ReadSkillFile::new(shared.clone())),
            Arc::new(SaveSkill::new(shared.clone())),
        ];
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
        let loaded = self
            .shared
            .loaded
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
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
}

impl InstructionSource {
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
        let s = &self.shared;
        match load_body(&s.paths, &s.runtime, &s.ctx, inst, args.trim()).await {
            Ok(loaded) => {
                warnings.extend(loaded.notes);
                s.mark_loaded(inst);
                Some(format!(
                    "\n## Skill `{name}` (invoked by the user with /{name})\n{}",
                    loaded.text
                ))
            }
            Err(e) => {
                warnings.push(format!("/{name}: {e}"));
                None
            }
        }
    }
}

fn spec(name: &str, description: &str, schema: Value, requires_approval: bool) -> ToolSpec {
    ToolSpec {
        name: name.into(),
        description: description.into(),
        input_schema: schema.to_string(),
        requires_approval,
    }
}

fn input(text: &str) -> Result<Value, SkillError> {
    serde_json::from_str(text).map_err(|e| SkillError::InvalidInput(e.to_string()))
}

fn text_field(v: &Value, key: &str) -> Result<String, SkillError> {
    v[key]
        .as_str()
        .map(str::to_string)
        .ok_or_else(|| SkillError::InvalidInput(format!("`{key}` is required (a string)")))
}

fn output(text: String) -> ToolOutput {
    ToolOutput {
        text,
        truncated: false,
    }
}

struct LoadSkill {
    shared: Arc<Shared>,
    spec: ToolSpec,
}

impl LoadSkill {
    fn new(shared: Arc<Shared>) -> LoadSkill {
        LoadSkill {
            shared,
            spec: spec(
                "load_skill",
                "Load the instructions of one of the skills listed in the system prompt. Call it when the task matches the skill's description; follow the instructions it returns.",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "The skill's name"},
                        "arguments": {"type": "string", "description": "What the skill should work on ($ARGUMENTS)"}
                    },
                    "required": ["name"],
                    "additionalProperties": false
                }),
                false,
            ),
        }
    }
}

impl HostTool for LoadSkill {
    fn skill(&self) -> &str {
        OWNER
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, text: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            let v = input(text)?;
            let name = text_field(&v, "name")?;
            let args = v["arguments"].as_str().unwrap_or_default();
            let found = self.shared.discoverer.discover();
            let inst = found
                .get(&name)
                .filter(|i| model_may_load(i))
                .ok_or_else(|| {
                    SkillError::NotFound(format!(
                        "no skill `{name}` is offered; the skills you can load are listed in the system prompt"
                    ))
                })?;
            let s = &self.shared;
            let loaded = load_body(&s.paths, &s.runtime, &s.ctx, inst, args)
                .await
                .map_err(|e| SkillError::Denied(e.to_string()))?;
            s.mark_loaded(inst);
            let mut text = format!("# Skill `{name}`\n{}", loaded.text);
            if !loaded.notes.is_empty() {
                text.push_str("\n(Left out of these instructions: ");
                text.push_str(&loaded.notes.join("; "));
                text.push(')');
            }
            Ok(output(text))
        })
    }
}

struct ReadSkillFile {
    shared: Arc<Shared>,
    spec: ToolSpec,
}

impl ReadSkillFile {
    fn new(shared: Arc<Shared>) -> ReadSkillFile {
        ReadSkillFile {
            shared,
            spec: spec(
                "read_skill_file",
                "Read a file of a skill's own directory (a reference or a script a skill's instructions name). Paths are relative to the skill's directory.",
                json!({
                    "type": "object",
                    "properties": {
                        "skill": {"type": "string"},
                        "path": {"type": "string", "description": "Relative to the skill's directory, e.g. references/guide.md"}
                    },
                    "required": ["skill", "path"],
                    "additionalProperties": false
                }),
                false,
            ),
        }
    }
}

impl HostTool for ReadSkillFile {
    fn skill(&self) -> &str {
        OWNER
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, text: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            let v = input(text)?;
            let name = text_field(&v, "skill")?;
            let rel = text_field(&v, "path")?;
            let found = self.shared.discoverer.discover();
            let inst = found
                .get(&name)
                .filter(|i| model_may_load(i))
                .ok_or_else(|| SkillError::NotFound(format!("no skill `{name}` is offered")))?;
            let path = agent_instructions::render::confined(&inst.skill.dir, &rel)
                .map_err(SkillError::Denied)?;
            let meta = std::fs::metadata(&path)
                .map_err(|e| SkillError::Failed(format!("`{rel}`: {e}")))?;
            if !meta.is_file() {
                return Err(SkillError::InvalidInput(format!("`{rel}` is not a file")));
            }
            if meta.len() > MAX_READ {
                return Err(SkillError::Failed(format!(
                    "`{rel}` is larger than {MAX_READ} bytes"
                )));
            }
            let bytes =
                std::fs::read(&path).map_err(|e| SkillError::Failed(format!("`{rel}`: {e}")))?;
            String::from_utf8(bytes)
                .map(output)
                .map_err(|_| SkillError::Failed(format!("`{rel}` is not UTF-8 text")))
        })
    }
}

struct SaveSkill {
    shared: Arc<Shared>,
    spec: ToolSpec,
}

impl SaveSkill {
    fn new(shared: Arc<Shared>) -> SaveSkill {
        SaveSkill {
            shared,
            spec: spec(
                "save_skill",
                "Save reusable instructions as a skill (a SKILL.md in the user's skills directory) for later sessions. The user approves each save.",
                json!({
                    "type": "object",
                    "properties": {
                        "name": {"type": "string", "description": "lowercase letters, digits and hyphens"},
                        "description": {"type": "string", "description": "What it does and when to use it"},
                        "body": {"type": "string", "description": "The Markdown instructions"},
                        "resources": {"type": "object", "additionalProperties": {"type": "string"}, "description": "Files beside SKILL.md: relative path → content"},
                        "replace": {"type": "boolean"}
                    },
                    "required": ["name", "description", "body"],
                    "additionalProperties": false
                }),
                true,
            ),
        }
    }
}

impl HostTool for SaveSkill {
    fn skill(&self) -> &str {
        OWNER
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, text: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            let v = input(text)?;
            let req = SaveRequest {
                name: text_field(&v, "name")?,
                description: text_field(&v, "description")?,
                body: text_field(&v, "body")?,
                resources: v["resources"]
                    .as_object()
                    .map(|m| {
                        m.iter()
                            .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
                            .collect()
                    })
                    .unwrap_or_default(),
                replace: v["replace"].as_bool().unwrap_or(false),
            };
            let s = &self.shared;
            let target = s.store_dir.join(&req.name).display().to_string();
            match agent_instructions::save(&s.store_dir, &req) {
                Ok((path, _)) => {
                    let _ = audit_at(&s.paths, &req.name, "skill:save", &target, "saved");
                    Ok(output(format!(
                        "saved skill `{}` into {}",
                        req.name,
                        path.display()
                    )))
                }
                Err(agent_instructions::SaveError::Refused(f)) => {
                    let _ = audit_at(
                        &s.paths,
                        &req.name,
                        "skill:save",
                        &target,
                        "refused: content scan",
                    );
                    Err(SkillError::Denied(
                        agent_instructions::SaveError::Refused(f).to_string(),
                    ))
                }
                Err(agent_instructions::SaveError::Invalid(m)) => Err(SkillError::InvalidInput(m)),
                Err(e) => Err(SkillError::Failed(e.to_string())),
            }
        })
    }
}

/// Puts SKILL.md skills into a session's parts: `--skills NAME` naming one loads its body
/// now when `task` is given (`agent run`: the task is `$ARGUMENTS`; returned as attachments
/// of the first message) and is taken out of the components' explicit list; the session
/// gets the [`InstructionSource`].
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
    let attachments = match task {
        Some(task) => crate::instructions::explicit_attachments(
            app,
            &mut parts.explicit,
            &parts.runtime,
            &parts.ctx,
            task,
        )?,
        None => {
            parts.explicit.retain(|n| !named.contains(n));
            Vec::new()
        }
    };
    let preloaded = if task.is_some() { named } else { Vec::new() };
    parts.host_tools.push(Arc::new(InstructionSource::new(
        discoverer,
        app.paths.clone(),
        parts.runtime.clone(),
        parts.ctx.clone(),
        &preloaded,
    )));
    Ok(attachments)
}
