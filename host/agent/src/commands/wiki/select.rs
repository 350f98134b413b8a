//! Which skills take part in `agent wiki` (`--skills NAME|DIR …`, the
//! global flag every command shares, read as `agent security-audit` reads
//! it: a name activates that installed skill, a directory loads the skills
//! in it — an unsigned development copy only with `--allow-unsigned`).
//!
//! - Without `--skills`: every loaded skill (built-in, installed and
//!   enabled, the project's `.agent/skills`) takes part.
//! - With it: only the skills it names or loads contribute — their
//!   sections, diagrams, analyzers, classifiers and hooks; the security
//!   chapter uses the built-in security skills plus the selected ones. The
//!   built-ins the wiki runs on (`wiki-base`, `security-base`,
//!   `core-tools`) are used whatever the selection.

use agent_manifest::{Manifest, WikiFileClass};
use agent_runtime::Skill;
use agent_runtime::inspect::ExportKind;
use agent_wiki::classifiers::Classifiers;
use agent_wiki::modules::FileClass;
use anyhow::Result;

use crate::app::App;
use crate::cli::UsageError;

/// The skills taking part.
#[derive(Debug, Clone, Default)]
pub struct Selection {
    /// `None`: every loaded skill; `Some(names)`: those only.
    names: Option<Vec<String>>,
}

/// Whether a manifest gives the wiki anything (sections, diagrams,
/// classifiers, security rules).
fn contributes(m: &Manifest) -> bool {
    m.wiki.is_some()
        || m.security_rules
            .as_ref()
            .is_some_and(|r| r.sast_rules_file.is_some() || !r.scanners.is_empty())
}

impl Selection {
    /// The selection of this run, checked against the loaded `skills`.
    ///
    /// # Errors
    /// A `--skills` name that is not loaded, or a skill that gives a wiki
    /// nothing: a usage error naming the flag and the value (exit 2).
    pub fn of(app: &App, skills: &[Skill]) -> Result<Selection> {
        if app.global.skills.is_empty() {
            return Ok(Selection { names: None });
        }
        let names = app.explicit_skills(skills);
        for name in &names {
            match skills.iter().find(|s| s.name() == name) {
                None => {
                    return Err(UsageError(format!(
                        "--skills {name}: no such skill is installed or loaded (see `agent skill list`)"
                    ))
                    .into());
                }
                Some(s) if !contributes(&s.manifest) && !s.exports(ExportKind::Hooks) => {
                    return Err(UsageError(format!(
                        "--skills {name}: gives a wiki nothing (no `wiki` entry in its SKILL.yaml, no security rules, no hooks)"
                    ))
                    .into());
                }
                Some(_) => {}
            }
        }
        Ok(Selection { names: Some(names) })
    }

    /// Whether `skill` contributes to this wiki.
    pub fn takes_part(&self, skill: &Skill) -> bool {
        match &self.names {
            None => true,
            Some(names) => names.iter().any(|n| n == skill.name()),
        }
    }

    /// Whether `skill` is used by the security chapter: a built-in, or
    /// taking part.
    pub fn for_security(&self, skill: &Skill) -> bool {
        skill.origin == agent_runtime::Origin::Builtin || self.takes_part(skill)
    }

    /// The file classifiers of the skills taking part, in skill order then
    /// manifest order (the first match wins).
    ///
    /// # Errors
    /// A pattern that is not a glob (the manifest checks them at load).
    pub fn classifiers(&self, skills: &[Skill]) -> Result<Classifiers> {
        let mut rules = Vec::new();
        for skill in self.of_skills(skills) {
            let Some(wiki) = &skill.manifest.wiki else {
                continue;
            };
            for c in &wiki.classifiers {
                let class = match c.class {
                    WikiFileClass::Source => FileClass::Source,
                    WikiFileClass::Test => FileClass::Test,
                    WikiFileClass::Config => FileClass::Config,
                    WikiFileClass::Docs => FileClass::Docs,
                    WikiFileClass::Generated => FileClass::Generated,
                };
                rules.push((c.pattern.clone(), class));
            }
        }
        Classifiers::new(&rules).map_err(|e| anyhow::anyhow!("wiki.classifiers: {e}"))
    }

    /// The skills taking part, in load order.
    pub fn of_skills<'s>(&self, skills: &'s [Skill]) -> Vec<&'s Skill> {
        skills.iter().filter(|s| self.takes_part(s)).collect()
    }
}
