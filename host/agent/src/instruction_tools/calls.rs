//! The three tools of [`super::InstructionSource`] (`load_skill`, `read_skill_file`,
//! `save_skill`): one [`HostTool`] type, owned by `instructions`, whose spec and call are
//! chosen by its [`Kind`]; and [`invoke`], the one way a skill's body is loaded — inline
//! (the body for the conversation, its `allowed_tools` a constraint and its `model:` the
//! turn's from then on) or, for `context: fork`, run as a sub-agent whose answer is all that
//! comes back.

use std::sync::{Arc, PoisonError};

use agent_core::{ForkTask, HostFuture, HostTool};
use agent_instructions::{Context, SaveRequest};
use agent_runtime::{SkillError, ToolOutput, ToolSpec};
use serde_json::{Value, json};

use super::{OWNER, Shared, model_may_load};
use crate::instructions::{Instruction, audit_at, load_body};

/// Largest file `read_skill_file` returns.
const MAX_READ: u64 = 256 * 1024;

/// Which of the three tools.
#[derive(Clone, Copy)]
pub(super) enum Kind {
    Load,
    Read,
    Save,
}

/// One of the source's tools.
pub(super) struct InstructionTool {
    shared: Arc<Shared>,
    kind: Kind,
    spec: ToolSpec,
}

impl InstructionTool {
    pub(super) fn new(shared: Arc<Shared>, kind: Kind) -> InstructionTool {
        let spec = match kind {
            Kind::Load => spec(
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
            Kind::Read => spec(
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
            Kind::Save => spec(
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
        };
        InstructionTool { shared, kind, spec }
    }
}

impl HostTool for InstructionTool {
    fn skill(&self) -> &str {
        OWNER
    }

    fn spec(&self) -> &ToolSpec {
        &self.spec
    }

    fn call<'a>(&'a self, text: &'a str) -> HostFuture<'a, Result<ToolOutput, SkillError>> {
        Box::pin(async move {
            let v: Value =
                serde_json::from_str(text).map_err(|e| SkillError::InvalidInput(e.to_string()))?;
            match self.kind {
                Kind::Load => load(&self.shared, &v).await,
                Kind::Read => read(&self.shared, &v),
                Kind::Save => save(&self.shared, &v),
            }
        })
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

/// What invoking a skill gave.
pub(super) enum Invoked {
    /// Its body, for the conversation.
    Inline(String),
    /// `context: fork`: the sub-agent's final answer.
    Forked(String),
}

/// Loads `inst`'s body for `args` (the content scan, `$ARGUMENTS`, the `!` lines under its
/// grants; what was left out goes to `notes`). Inline: the skill counts as loaded (its
/// `allowed_tools` a constraint, its `model:` the turn's, from now on). `context: fork`: the
/// body (with the arguments) is the task of a sub-agent of the turn, which gets the skill's
/// `allowed_tools` and `model:`; only its answer is returned.
pub(super) async fn invoke(
    s: &Shared,
    inst: &Instruction,
    args: &str,
    notes: &mut Vec<String>,
) -> Result<Invoked, String> {
    let loaded = load_body(&s.paths, &s.runtime, &s.ctx, inst, args)
        .await
        .map_err(|e| e.to_string())?;
    notes.extend(loaded.notes);
    let front = &inst.skill.front;
    if front.context == Context::Fork {
        let forker = s
            .forker
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
            .ok_or_else(|| {
                format!(
                    "skill `{}` has `context: fork` and this session runs no sub-agents",
                    inst.name()
                )
            })?;
        let mut task = loaded.text;
        if !args.is_empty() && !names_arguments(&inst.skill.body) {
            task.push_str(&format!("\n\nARGUMENTS: {args}"));
        }
        let answer = forker
            .fork(ForkTask {
                skill: inst.name().to_string(),
                task,
                model: front.model.clone(),
                allowed_tools: front.allowed_tools.clone(),
                inherited: s.constraints(),
            })
            .await?;
        return Ok(Invoked::Forked(answer));
    }
    s.mark_loaded(inst);
    if let Some(m) = &front.model {
        *s.turn_model.lock().unwrap_or_else(PoisonError::into_inner) = Some(m.clone());
    }
    Ok(Invoked::Inline(loaded.text))
}

/// Whether a body places its arguments itself (`$ARGUMENTS`, `$1`…`$9`).
fn names_arguments(body: &str) -> bool {
    body.contains("$ARGUMENTS") || (1..=9).any(|n| body.contains(&format!("${n}")))
}

async fn load(s: &Shared, v: &Value) -> Result<ToolOutput, SkillError> {
    let name = text_field(v, "name")?;
    let args = v["arguments"].as_str().unwrap_or_default();
    let found = s.discoverer.discover();
    let inst = found
        .get(&name)
        .filter(|i| model_may_load(i))
        .ok_or_else(|| {
            SkillError::NotFound(format!(
                "no skill `{name}` is offered; the skills you can load are listed in the system prompt"
            ))
        })?;
    let mut notes = Vec::new();
    let invoked = invoke(s, inst, args, &mut notes)
        .await
        .map_err(SkillError::Denied)?;
    let mut text = match invoked {
        Invoked::Inline(body) => format!("# Skill `{name}`\n{body}"),
        Invoked::Forked(answer) => {
            format!("# Skill `{name}` ran as a sub-agent (context: fork); its answer:\n{answer}")
        }
    };
    if !notes.is_empty() {
        text.push_str("\n(Left out of these instructions: ");
        text.push_str(&notes.join("; "));
        text.push(')');
    }
    Ok(output(text))
}

fn read(s: &Shared, v: &Value) -> Result<ToolOutput, SkillError> {
    let name = text_field(v, "skill")?;
    let rel = text_field(v, "path")?;
    let found = s.discoverer.discover();
    let inst = found
        .get(&name)
        .filter(|i| model_may_load(i))
        .ok_or_else(|| SkillError::NotFound(format!("no skill `{name}` is offered")))?;
    let path =
        agent_instructions::render::confined(&inst.skill.dir, &rel).map_err(SkillError::Denied)?;
    let meta = std::fs::metadata(&path).map_err(|e| SkillError::Failed(format!("`{rel}`: {e}")))?;
    if !meta.is_file() {
        return Err(SkillError::InvalidInput(format!("`{rel}` is not a file")));
    }
    if meta.len() > MAX_READ {
        return Err(SkillError::Failed(format!(
            "`{rel}` is larger than {MAX_READ} bytes"
        )));
    }
    let bytes = std::fs::read(&path).map_err(|e| SkillError::Failed(format!("`{rel}`: {e}")))?;
    String::from_utf8(bytes)
        .map(output)
        .map_err(|_| SkillError::Failed(format!("`{rel}` is not UTF-8 text")))
}

fn save(s: &Shared, v: &Value) -> Result<ToolOutput, SkillError> {
    let req = SaveRequest {
        name: text_field(v, "name")?,
        description: text_field(v, "description")?,
        body: text_field(v, "body")?,
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
}
