//! Skills that take another skill's name. A later source replaces an earlier
//! skill of the same name, except that a skill may take the name of a
//! built-in, and a project skill the name of a user skill, only when the user
//! allows that name (`--allow-shadow NAME`, `skills.allow_shadow`): grants are
//! stored per skill name, so the newcomer would receive the grants given to
//! the original. A refused skill is skipped and the original stays in use;
//! both choices are warned about and audited.

use agent_policy::AuditRecord;
use agent_runtime::{Origin, SkillPackage};

/// The names the user allows to be taken, each with where it was allowed.
#[derive(Debug, Default)]
pub struct AllowedShadows(Vec<(String, &'static str)>);

impl AllowedShadows {
    /// From `--allow-shadow` values and `skills.allow_shadow`.
    pub fn new(flags: &[String], config: &[String]) -> AllowedShadows {
        let mut names: Vec<(String, &'static str)> = Vec::new();
        for n in flags {
            names.push((n.clone(), "--allow-shadow"));
        }
        for n in config {
            if !names.iter().any(|(m, _)| m == n) {
                names.push((n.clone(), "skills.allow_shadow"));
            }
        }
        AllowedShadows(names)
    }

    fn by(&self, name: &str) -> Option<&'static str> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, by)| *by)
    }
}

/// One skill taking the name of another that needs the user's consent.
#[derive(Debug, Clone)]
pub struct Shadow {
    /// The name both skills have.
    pub name: String,
    /// Where the newcomer is, and its source.
    pub new: (String, Origin),
    /// Where the original is, and its source.
    pub old: (String, Origin),
    /// `Some(flag or key)`: allowed; `None`: refused.
    pub allowed_by: Option<&'static str>,
}

/// Discovery's packages after the shadowing rule.
pub struct Resolved {
    /// One package per name, sorted by name.
    pub packages: Vec<SkillPackage>,
    /// Built-ins replaced with consent: used again when the replacement
    /// fails to load.
    pub fallbacks: Vec<SkillPackage>,
    /// Every name taken that needed consent, allowed or not.
    pub shadows: Vec<Shadow>,
    /// Warnings about allowed names that shadow nothing.
    pub unused: Vec<String>,
}

/// Whether a skill from `new` taking the name of one from `old` needs consent.
fn needs_consent(old: Origin, new: Origin) -> bool {
    (old == Origin::Builtin && new != Origin::Builtin)
        || (old == Origin::User && new == Origin::Project)
}

fn location(pkg: &SkillPackage) -> String {
    match &pkg.dir {
        Some(d) => d.display().to_string(),
        None => format!("built-in {}", pkg.manifest.name),
    }
}

/// Applies the rule to `found` (in source order: built-ins, user, project,
/// `--skills`).
pub fn resolve(found: Vec<SkillPackage>, allowed: &AllowedShadows) -> Resolved {
    let unused = allowed
        .0
        .iter()
        .filter(|(n, _)| {
            !found.iter().any(|p| {
                &p.manifest.name == n && matches!(p.origin, Origin::Builtin | Origin::User)
            })
        })
        .map(|(n, by)| {
            format!("{by} {n}: no built-in or user skill is named `{n}`; nothing to allow")
        })
        .collect();
    let mut packages: Vec<SkillPackage> = Vec::new();
    let mut fallbacks = Vec::new();
    let mut shadows = Vec::new();
    for pkg in found {
        if let Some(i) = packages
            .iter()
            .position(|p| p.manifest.name == pkg.manifest.name)
        {
            let old = &packages[i];
            if needs_consent(old.origin, pkg.origin) {
                let shadow = Shadow {
                    name: pkg.manifest.name.clone(),
                    new: (location(&pkg), pkg.origin),
                    old: (location(old), old.origin),
                    allowed_by: allowed.by(&pkg.manifest.name),
                };
                let refused = shadow.allowed_by.is_none();
                shadows.push(shadow);
                if refused {
                    continue;
                }
            }
            let old = packages.remove(i);
            if old.origin == Origin::Builtin {
                fallbacks.push(old);
            }
        }
        packages.push(pkg);
    }
    packages.sort_by(|a, b| a.manifest.name.cmp(&b.manifest.name));
    Resolved {
        packages,
        fallbacks,
        shadows,
        unused,
    }
}

impl Shadow {
    fn original(&self) -> String {
        match self.old.1 {
            Origin::Builtin => format!("the built-in skill `{}`", self.name),
            other => format!(
                "the {} skill `{}` at {}",
                other.as_str(),
                self.name,
                self.old.0
            ),
        }
    }

    /// The warning for stderr: both sources, and what to do.
    pub fn warning(&self) -> String {
        let (new_at, new_origin) = (&self.new.0, self.new.1.as_str());
        match self.allowed_by {
            None => format!(
                "refused {new_origin} skill `{name}` at {new_at}: it takes the name of {original}, which stays in use. \
                 To use it instead (it receives the grants given to `{name}`), pass `--allow-shadow {name}` \
                 or add \"{name}\" to `skills.allow_shadow` in config.toml",
                name = self.name,
                original = self.original(),
            ),
            Some(by) => format!(
                "{new_origin} skill `{name}` at {new_at} replaces {original} (allowed by {by}); \
                 it receives the grants given to `{name}`",
                name = self.name,
                original = self.original(),
            ),
        }
    }

    /// The audit log entry of the decision.
    pub fn audit_record(&self) -> AuditRecord {
        AuditRecord {
            skill: self.name.clone(),
            capability: "skill:shadow".into(),
            target: format!(
                "{} ({}) over {} ({})",
                self.new.0,
                self.new.1.as_str(),
                self.old.0,
                self.old.1.as_str()
            ),
            decision: match self.allowed_by {
                Some(by) => format!("allowed: {by}"),
                None => "refused: not allowed (--allow-shadow)".into(),
            },
        }
    }
}
