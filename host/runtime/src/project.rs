//! Project facts for the `project` import: languages by file extension
//! (a bounded walk) and the build system by marker files.

use std::collections::HashMap;
use std::path::Path;

use crate::state::ProjectInfo;

const MAX_FILES: usize = 5000;
const MAX_DEPTH: usize = 6;
const SKIP_DIRS: [&str; 8] = [
    ".git",
    "target",
    "node_modules",
    "vendor",
    "dist",
    "build",
    ".venv",
    "__pycache__",
];

fn language_of(ext: &str) -> Option<&'static str> {
    Some(match ext {
        "rs" => "rust",
        "py" => "python",
        "js" | "mjs" | "cjs" | "jsx" => "javascript",
        "ts" | "tsx" | "mts" => "typescript",
        "go" => "go",
        "java" => "java",
        "kt" | "kts" => "kotlin",
        "swift" => "swift",
        "rb" => "ruby",
        "c" | "h" => "c",
        "cc" | "cpp" | "cxx" | "hpp" | "hh" => "cpp",
        "cs" => "csharp",
        "php" => "php",
        "yaml" | "yml" => "yaml",
        "tf" => "terraform",
        "sh" | "bash" => "shell",
        _ => return None,
    })
}

const BUILD_MARKERS: [(&str, &str); 10] = [
    ("Cargo.toml", "cargo"),
    ("package.json", "npm"),
    ("go.mod", "go"),
    ("Package.swift", "swiftpm"),
    ("pyproject.toml", "python"),
    ("pom.xml", "maven"),
    ("build.gradle", "gradle"),
    ("build.gradle.kts", "gradle"),
    ("Gemfile", "bundler"),
    ("CMakeLists.txt", "cmake"),
];

/// Detects the project's name, languages and build system.
pub fn detect(root: &Path) -> ProjectInfo {
    let name = root
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .unwrap_or_default();
    let mut counts: HashMap<&'static str, usize> = HashMap::new();
    let mut seen = 0usize;
    let mut stack = vec![(root.to_path_buf(), 0usize)];
    let mut xcode = false;
    while let Some((dir, depth)) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for entry in entries.flatten() {
            if seen >= MAX_FILES {
                break;
            }
            let file_name = entry.file_name();
            let file_name = file_name.to_string_lossy();
            let Ok(ft) = entry.file_type() else { continue };
            if ft.is_dir() {
                if file_name.ends_with(".xcodeproj") || file_name.ends_with(".xcworkspace") {
                    xcode = true;
                }
                if depth < MAX_DEPTH
                    && !file_name.starts_with('.')
                    && !SKIP_DIRS.contains(&file_name.as_ref())
                {
                    stack.push((entry.path(), depth + 1));
                }
            } else if ft.is_file() {
                seen += 1;
                if file_name == "Dockerfile" {
                    *counts.entry("dockerfile").or_default() += 1;
                } else if let Some(lang) = Path::new(file_name.as_ref())
                    .extension()
                    .and_then(|e| e.to_str())
                    .and_then(language_of)
                {
                    *counts.entry(lang).or_default() += 1;
                }
            }
        }
    }
    let mut languages: Vec<(&str, usize)> = counts.into_iter().collect();
    languages.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(b.0)));
    let build_system = if xcode {
        Some("xcode".to_string())
    } else {
        BUILD_MARKERS
            .iter()
            .find(|(marker, _)| root.join(marker).exists())
            .map(|(_, b)| b.to_string())
    };
    ProjectInfo {
        name,
        languages: languages.into_iter().map(|(l, _)| l.to_string()).collect(),
        build_system,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn detects_languages_and_build_system() {
        let dir = tempfile::tempdir().expect("tempdir");
        std::fs::write(dir.path().join("Cargo.toml"), "[package]").expect("write");
        std::fs::create_dir(dir.path().join("src")).expect("mkdir");
        for f in ["a.rs", "b.rs", "c.py"] {
            std::fs::write(dir.path().join("src").join(f), "").expect("write");
        }
        std::fs::create_dir(dir.path().join("target")).expect("mkdir");
        std::fs::write(dir.path().join("target/x.go"), "").expect("write");
        let info = detect(dir.path());
        assert_eq!(info.languages, vec!["rust", "python"]);
        assert_eq!(info.build_system.as_deref(), Some("cargo"));
    }
}
