//! Finding SKILL.md skills in a directory of skills.

use std::path::{Path, PathBuf};

use crate::parse::{InstructionSkill, ParseError};

/// What one directory held.
#[derive(Debug, Default)]
pub struct Found {
    /// Skills that parsed, sorted by directory name.
    pub skills: Vec<InstructionSkill>,
    /// Skills that did not, each error naming its file and line.
    pub broken: Vec<ParseError>,
}

/// The SKILL.md skills in `dir`'s subdirectories. A hidden directory (`.name`) is never a
/// skill (an install in progress, a version on its way out, `.git`); a directory holding a
/// `SKILL.yaml` is a component skill and not read here. A missing `dir` holds nothing.
pub fn discover_dir(dir: &Path) -> Found {
    let mut found = Found::default();
    let Ok(entries) = std::fs::read_dir(dir) else {
        return found;
    };
    let mut dirs: Vec<PathBuf> = entries
        .flatten()
        .filter(|e| !e.file_name().to_string_lossy().starts_with('.'))
        .map(|e| e.path())
        .filter(|p| is_instruction_dir(p))
        .collect();
    dirs.sort();
    for d in dirs {
        match InstructionSkill::load(&d) {
            Ok(s) => found.skills.push(s),
            Err(e) => found.broken.push(e),
        }
    }
    found
}

/// Whether `dir` is an instruction skill: it has a SKILL.md and no SKILL.yaml.
pub fn is_instruction_dir(dir: &Path) -> bool {
    dir.join(crate::SKILL_FILE).is_file() && !dir.join("SKILL.yaml").exists()
}

/// `dir` itself as a skill when it is one, else the skills inside it (`--skills DIR`).
pub fn load_dir(dir: &Path) -> Found {
    if is_instruction_dir(dir) {
        let mut found = Found::default();
        match InstructionSkill::load(dir) {
            Ok(s) => found.skills.push(s),
            Err(e) => found.broken.push(e),
        }
        found
    } else {
        discover_dir(dir)
    }
}
