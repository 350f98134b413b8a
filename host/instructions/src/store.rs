//! The writable skill store (seed 002): `agent skill save NAME` and the `save_skill` tool
//! write `<dir>/<name>/SKILL.md` and its resources; listing skips hidden directories
//! ([`crate::discover_dir`]); removing deletes the directory (the registry's `remove`).

use std::path::{Component, Path, PathBuf};

use crate::parse::is_name;
use crate::scan::{Finding, Severity};

/// Largest resource file a save writes.
pub const MAX_RESOURCE_BYTES: usize = 1 << 20;

/// What to save.
#[derive(Debug, Clone, Default)]
pub struct SaveRequest {
    /// The skill's name (its directory).
    pub name: String,
    /// When to use it.
    pub description: String,
    /// The Markdown instructions.
    pub body: String,
    /// Files beside SKILL.md: relative path (no `..`, no hidden component) and content.
    pub resources: Vec<(String, String)>,
    /// Replace an existing skill of that name.
    pub replace: bool,
}

/// Why nothing was saved.
#[derive(Debug, thiserror::Error)]
pub enum SaveError {
    /// The request is not acceptable; the message says what to change.
    #[error("{0}")]
    Invalid(String),
    /// The content scan found high-severity content.
    #[error("the content scan refused it:\n{}", .0.iter().map(|f| format!("  {f}")).collect::<Vec<_>>().join("\n"))]
    Refused(Vec<Finding>),
    /// Writing failed.
    #[error("{path}: {source}")]
    Io {
        /// What was being written.
        path: PathBuf,
        /// The error.
        source: std::io::Error,
    },
}

fn io(path: &Path) -> impl FnOnce(std::io::Error) -> SaveError + '_ {
    move |source| SaveError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The SKILL.md text of a request.
pub fn skill_text(req: &SaveRequest) -> String {
    let desc = serde_yaml::to_string(&req.description).unwrap_or_default();
    let mut text = format!("---\nname: {}\ndescription: {}", req.name, desc);
    if !text.ends_with('\n') {
        text.push('\n');
    }
    text.push_str("---\n");
    text.push_str(&req.body);
    if !req.body.ends_with('\n') {
        text.push('\n');
    }
    text
}

fn check_rel(rel: &str) -> Result<(), SaveError> {
    let p = Path::new(rel);
    let ok = !rel.is_empty()
        && p.components().all(|c| match c {
            Component::Normal(s) => !s.to_string_lossy().starts_with('.'),
            _ => false,
        })
        && rel != crate::SKILL_FILE;
    if ok {
        Ok(())
    } else {
        Err(SaveError::Invalid(format!(
            "resource `{rel}`: give a relative path inside the skill (no `..`, no absolute path, no hidden name, not SKILL.md)"
        )))
    }
}

/// Writes the skill into `dir/<name>/` (staged in a hidden directory, then renamed), after
/// the content scan: any high-severity finding refuses the save. Returns the directory and
/// the medium findings.
///
/// # Errors
/// [`SaveError`].
pub fn save(dir: &Path, req: &SaveRequest) -> Result<(PathBuf, Vec<Finding>), SaveError> {
    if !is_name(&req.name) {
        return Err(SaveError::Invalid(format!(
            "`{}` is not a skill name: 1 to 64 lowercase letters, digits and hyphens",
            req.name
        )));
    }
    if req.description.trim().is_empty() {
        return Err(SaveError::Invalid(
            "the description is empty: say what the skill does and when to use it".into(),
        ));
    }
    for (rel, content) in &req.resources {
        check_rel(rel)?;
        if content.len() > MAX_RESOURCE_BYTES {
            return Err(SaveError::Invalid(format!(
                "resource `{rel}` is larger than {MAX_RESOURCE_BYTES} bytes"
            )));
        }
    }
    let text = skill_text(req);
    let mut findings = crate::scan::scan_text(crate::SKILL_FILE, &text);
    for (rel, content) in &req.resources {
        findings.extend(crate::scan::scan_text(rel, content));
    }
    if findings.iter().any(|f| f.severity == Severity::High) {
        return Err(SaveError::Refused(findings));
    }
    // The text must read back as a skill of that name.
    crate::parse::parse(&dir.join(&req.name).join(crate::SKILL_FILE), &text)
        .map_err(|e| SaveError::Invalid(e.to_string()))?;
    let dest = dir.join(&req.name);
    if dest.exists() && !req.replace {
        return Err(SaveError::Invalid(format!(
            "{} already exists; pass --replace (or `replace: true`) to overwrite it",
            dest.display()
        )));
    }
    std::fs::create_dir_all(dir).map_err(io(dir))?;
    let staging = dir.join(format!(".save-{}-{}", req.name, std::process::id()));
    let _ = std::fs::remove_dir_all(&staging);
    let write = |rel: &str, content: &str| -> Result<(), SaveError> {
        let p = staging.join(rel);
        if let Some(parent) = p.parent() {
            std::fs::create_dir_all(parent).map_err(io(parent))?;
        }
        std::fs::write(&p, content).map_err(io(&p))
    };
    let result = (|| {
        write(crate::SKILL_FILE, &text)?;
        for (rel, content) in &req.resources {
            write(rel, content)?;
        }
        if dest.exists() {
            let old = dir.join(format!(".old-{}-{}", req.name, std::process::id()));
            std::fs::rename(&dest, &old).map_err(io(&dest))?;
            std::fs::rename(&staging, &dest).map_err(io(&dest))?;
            let _ = std::fs::remove_dir_all(&old);
        } else {
            std::fs::rename(&staging, &dest).map_err(io(&dest))?;
        }
        Ok(())
    })();
    if result.is_err() {
        let _ = std::fs::remove_dir_all(&staging);
    }
    result.map(|()| (dest, findings))
}
