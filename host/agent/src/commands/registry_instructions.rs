//! `agent registry publish DIR`: publishing a SKILL.md instruction skill to a signed index —
//! parsed, content-scanned (a high finding refuses unless `--force`, audited), packed, and
//! recorded with `kind: instructions` (docs/registry.md, "Kinds").

use std::path::Path;

use agent_instructions::Severity;
use anyhow::{Context, Result, bail};

use crate::app::App;
use crate::cli::{UsageError, exit};
use crate::instructions::{audit, blocking};

/// What `registry publish` was given for a SKILL.md directory.
pub struct Publish<'a> {
    pub dir: &'a Path,
    pub version: Option<&'a str>,
    pub force: bool,
    pub key: &'a agent_trust::SecretKey,
    pub index: &'a Path,
    pub expires_in: time::Duration,
}

pub fn publish(app: &mut App, req: &Publish) -> Result<u8> {
    let file = req.dir.join(agent_instructions::SKILL_FILE);
    if !file.is_file() {
        return Err(UsageError(format!(
            "{}: a directory to publish must hold a SKILL.md (or pass a component .wasm with --manifest)",
            req.dir.display()
        ))
        .into());
    }
    let text =
        std::fs::read_to_string(&file).with_context(|| format!("reading {}", file.display()))?;
    let skill =
        agent_instructions::parse::parse(&file, &text).map_err(|e| anyhow::anyhow!("{e}"))?;
    let version = skill_version(&skill.front, req.version, &file)?;
    let name = skill.front.name.clone();
    let findings = agent_instructions::scan_dir(req.dir);
    let high = findings
        .iter()
        .filter(|f| f.severity == Severity::High)
        .count();
    let target = format!("{} -> {}", req.dir.display(), req.index.display());
    if blocking(&findings) {
        if !req.force {
            audit(
                app,
                &name,
                "registry:publish",
                &target,
                &format!("refused: content scan ({high} high)"),
            )?;
            bail!(
                "not published: the content scan of {} found high-severity content:\n{}\n(read it; `--force` publishes it anyway, audited)",
                req.dir.display(),
                findings
                    .iter()
                    .filter(|f| f.severity == Severity::High)
                    .map(|f| format!("  {f}"))
                    .collect::<Vec<_>>()
                    .join("\n")
            );
        }
        audit(
            app,
            &name,
            "registry:publish",
            &target,
            &format!("forced: content scan ({high} high)"),
        )?;
        eprintln!("warning: publishing despite {high} high-severity finding(s) (--force):");
    }
    for f in &findings {
        eprintln!("  {f}");
    }
    let rec = agent_registry::publish_instructions(&agent_registry::InstructionPublish {
        dir: req.dir,
        name: &name,
        version: &version,
        description: &skill.front.description,
        key: req.key,
        index: req.index,
        expires_in: req.expires_in,
    })
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    println!(
        "published {} {} (SKILL.md instructions, artifact sha256 {}) to {} (snapshot signed by key {})",
        rec.name,
        rec.version,
        rec.artifact.sha256,
        req.index.display(),
        req.key.public().id()
    );
    Ok(exit::OK)
}

/// `--skill-version` when given, else the frontmatter's `metadata.version`; either must be semver.
fn skill_version(
    front: &agent_instructions::Frontmatter,
    flag: Option<&str>,
    file: &Path,
) -> Result<semver::Version> {
    if let Some(v) = flag {
        return semver::Version::parse(v).map_err(|e| {
            UsageError(format!("--skill-version {v}: not a semantic version ({e})")).into()
        });
    }
    let Some(meta) = &front.metadata else {
        return Err(UsageError(format!(
            "{}: no `metadata.version` in the frontmatter; add one or pass --skill-version",
            file.display()
        ))
        .into());
    };
    match meta.get("version") {
        Some(v) => match v.as_str() {
            Some(s) => semver::Version::parse(s).map_err(|e| {
                anyhow::anyhow!(
                    "{}: metadata.version `{s}` is not a semantic version ({e}); pass --skill-version to override",
                    file.display()
                )
            }),
            None => bail!(
                "{}: metadata.version must be a quoted string such as \"1.2.0\"; pass --skill-version to override",
                file.display()
            ),
        },
        None => Err(UsageError(format!(
            "{}: no `metadata.version` in the frontmatter; add one or pass --skill-version",
            file.display()
        ))
        .into()),
    }
}
