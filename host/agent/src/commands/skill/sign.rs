//! `agent skill sign`: signing a built skill with a key.

use std::path::{Path, PathBuf};

use agent_manifest::Manifest;
use anyhow::{Context, Result};

use crate::cli::exit;

pub(super) fn sign(path: &Path, key_file: &Path) -> Result<u8> {
    let key = agent_trust::SecretKey::read(key_file)?;
    let dir: PathBuf = if path.is_dir() {
        path.to_path_buf()
    } else {
        // A .wasm path: the skill directory holding it must name it.
        let parent = path.parent().filter(|p| !p.as_os_str().is_empty());
        let parent = parent.unwrap_or(Path::new("."));
        let named = Manifest::load_dir(parent)
            .ok()
            .and_then(|m| m.component_path(parent))
            .is_some_and(|c| c == parent.join(path.file_name().unwrap_or_default()));
        if !named {
            anyhow::bail!(
                "{}: a signature covers the component, SKILL.yaml and the files it names; \
                 give the skill directory (the one holding SKILL.yaml that names this component)",
                path.display()
            );
        }
        parent.to_path_buf()
    };
    let (component, files) = sign_skill(&dir, &key)?;
    println!(
        "signed {} with key {} (covers {})",
        component.display(),
        key.public().id(),
        files.join(", ")
    );
    Ok(exit::OK)
}

/// Signs the skill in `dir` in place: its component (replacing any signature it has),
/// `SKILL.yaml` and every file the manifest names. Returns the component's path and the
/// covered files.
pub(crate) fn sign_skill(
    dir: &Path,
    key: &agent_trust::SecretKey,
) -> Result<(PathBuf, Vec<String>)> {
    let manifest_path = dir.join(agent_manifest::MANIFEST_FILE);
    let (manifest, manifest_bytes) = Manifest::from_file_with_bytes(&manifest_path)?;
    let target = manifest.component_path(dir).with_context(|| {
        format!(
            "{}: SKILL.yaml has no implementation.component to sign",
            dir.display()
        )
    })?;
    let mut files = Vec::new();
    for rel in manifest.signed_files() {
        let bytes = if rel == agent_manifest::MANIFEST_FILE {
            manifest_bytes.clone()
        } else {
            agent_trust::read_skill_file(dir, &rel).map_err(|e| {
                anyhow::anyhow!(
                    "{}: named by {} but it {e}",
                    dir.join(&rel).display(),
                    manifest_path.display()
                )
            })?
        };
        files.push((rel, bytes));
    }
    let bytes = std::fs::read(&target).with_context(|| format!("reading {}", target.display()))?;
    let signed = agent_trust::sign(&bytes, &files, key.signing_key())
        .map_err(|e| anyhow::anyhow!("{}: {e}", target.display()))?;
    let tmp = target.with_extension("wasm.signing");
    let replaced = std::fs::write(&tmp, &signed)
        .with_context(|| format!("writing {}", tmp.display()))
        .and_then(|()| {
            std::fs::rename(&tmp, &target)
                .with_context(|| format!("replacing {}", target.display()))
        });
    if replaced.is_err() {
        // A full disk must not keep a half-written copy.
        let _ = std::fs::remove_file(&tmp);
    }
    replaced?;
    Ok((target, files.into_iter().map(|(p, _)| p).collect()))
}
