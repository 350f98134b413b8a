//! Installing SKILL.md instruction skills (docs/signatures.md, "Instruction skills"): no
//! component and no signature — the caller's content scan of the staged copy decides —
//! but the same crash-safe staging, lock and rename as a component skill.

use std::path::{Path, PathBuf};

use crate::install::Staging;
use crate::{MAX_UNPACKED_BYTES, Progress, RegistryError};

/// Clones (or updates) `url` into `cache_dir` and checks out `rev`; returns the work tree.
///
/// # Errors
/// Git and I/O errors naming the URL.
pub fn checkout_git(
    url: &str,
    rev: Option<&str>,
    cache_dir: &Path,
    progress: &dyn Progress,
) -> Result<PathBuf, RegistryError> {
    crate::source::git_checkout(url, rev, cache_dir, progress)
}

/// Copies the skill directory `src` (regular files and directories; hidden entries such as
/// `.git` skipped; a symlink refused) into a staging directory in `dest_dir`, lets `check`
/// inspect the staged copy, and puts it in place as `dest_dir/name`. Nothing is left behind
/// when `check` or a copy fails.
///
/// # Errors
/// I/O errors, a symlink, more than [`MAX_UNPACKED_BYTES`], or `check`'s refusal
/// ([`RegistryError::Invalid`] with its message).
pub fn install_instruction_dir(
    src: &Path,
    dest_dir: &Path,
    name: &str,
    check: &mut dyn FnMut(&Path) -> Result<(), String>,
) -> Result<PathBuf, RegistryError> {
    if !agent_manifest::is_skill_name(name) {
        return Err(RegistryError::Invalid(format!(
            "`{name}` is not a valid skill name"
        )));
    }
    let staging = Staging::new(dest_dir)?;
    let mut total = 0u64;
    copy_tree(src, staging.path(), &mut total)?;
    check(staging.path()).map_err(RegistryError::Invalid)?;
    staging.commit(dest_dir, name)
}

fn copy_tree(from: &Path, to: &Path, total: &mut u64) -> Result<(), RegistryError> {
    let entries = std::fs::read_dir(from).map_err(|e| RegistryError::io(from, e))?;
    for e in entries {
        let e = e.map_err(|err| RegistryError::io(from, err))?;
        let name = e.file_name();
        if name.to_string_lossy().starts_with('.') {
            continue;
        }
        let src = e.path();
        let dst = to.join(&name);
        let meta = std::fs::symlink_metadata(&src).map_err(|err| RegistryError::io(&src, err))?;
        if meta.is_dir() {
            std::fs::create_dir_all(&dst).map_err(|err| RegistryError::io(&dst, err))?;
            copy_tree(&src, &dst, total)?;
        } else if meta.is_file() {
            *total += meta.len();
            if *total > MAX_UNPACKED_BYTES {
                return Err(RegistryError::Invalid(format!(
                    "{}: the skill is larger than {MAX_UNPACKED_BYTES} bytes",
                    from.display()
                )));
            }
            std::fs::copy(&src, &dst).map_err(|err| RegistryError::io(&src, err))?;
        } else {
            return Err(RegistryError::Invalid(format!(
                "{}: not a regular file or directory (symlinks are not copied)",
                src.display()
            )));
        }
    }
    Ok(())
}
