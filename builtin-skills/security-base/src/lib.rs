//! `security-base`: the security engine's built-in scanners, a
//! `security-rule` skill component exporting the WIT `scanner` interface.
//!
//! | scanner | files | what it finds |
//! |---|---|---|
//! | `secrets` | every text file | provider tokens, private keys, JWTs, connection strings, generic credentials |
//! | `sast` | python, javascript, typescript, go, java, rust, swift, ruby, c, cpp | injection, path traversal, weak crypto, deserialization, XSS, SSRF, eval |
//! | `config` | Dockerfiles, Kubernetes YAML, GitHub workflows, Terraform | root containers, unpinned images and actions, privileged pods, public buckets, open security groups |
//!
//! The host hands every file to `scan`; the component needs no permission.
//! Rules are compiled once per instance (lazy statics) and every rule has a
//! keyword prefilter, so files without any keyword cost one Aho-Corasick
//! pass. A line carrying `agent:ignore`, `agent-security:ignore` or
//! `agent-security:ignore=RULE-ID[,RULE-ID]` (or the line above it) has no
//! findings (of that rule).
//!
//! Everything but the export glue is plain functions over strings, so the
//! unit tests run natively (where the `syntax` import is unavailable and the
//! tree-sitter rules are skipped).

pub mod config;
pub mod finding;
pub mod queries;
pub mod sast;
pub mod secret_rules;
pub mod secrets;
pub mod text;

use agent_skill_sdk::types::{Finding, SkillError};
use agent_skill_sdk::wit::scanner_skill::exports::agent::skill::scanner::{
    Guest, ScanTarget, ScannerSpec,
};

/// Languages the `sast` scanner wants.
pub const SAST_LANGUAGES: &[&str] = &[
    "python",
    "javascript",
    "typescript",
    "tsx",
    "go",
    "java",
    "rust",
    "swift",
    "ruby",
    "c",
    "cpp",
];

/// File patterns the `config` scanner wants.
pub const CONFIG_PATTERNS: &[&str] = &[
    "Dockerfile",
    "**/Dockerfile",
    "Dockerfile.*",
    "**/Dockerfile.*",
    "**/*.dockerfile",
    "Containerfile",
    "**/Containerfile",
    "**/*.yaml",
    "**/*.yml",
    "**/*.tf",
];

/// The scanners of this skill.
pub fn scanner_specs() -> Vec<ScannerSpec> {
    vec![
        ScannerSpec {
            name: "secrets".into(),
            description: "Hard-coded credentials: cloud and VCS tokens, chat and payment keys, private keys, JWTs, connection strings, generic passwords".into(),
            file_patterns: Vec::new(),
            languages: Vec::new(),
        },
        ScannerSpec {
            name: "sast".into(),
            description: "Injection, path traversal, weak crypto, insecure deserialization, XSS, SSRF and eval".into(),
            file_patterns: Vec::new(),
            languages: SAST_LANGUAGES.iter().map(|s| s.to_string()).collect(),
        },
        ScannerSpec {
            name: "config".into(),
            description: "Dockerfile, Kubernetes, GitHub Actions and Terraform misconfigurations".into(),
            file_patterns: CONFIG_PATTERNS.iter().map(|s| s.to_string()).collect(),
            languages: Vec::new(),
        },
    ]
}

/// Runs scanner `name` over one file (the export's logic, callable natively).
///
/// # Errors
/// `not-found` for an unknown scanner name.
pub fn scan_file(
    name: &str,
    path: &str,
    content: &str,
    language: Option<&str>,
) -> Result<Vec<Finding>, SkillError> {
    let findings = match name {
        "secrets" => secrets::scan(path, content),
        "sast" => sast::scan(path, content, language),
        "config" => config::scan(path, content),
        other => {
            return Err(SkillError::NotFound(format!(
                "no scanner `{other}` in security-base (scanners: secrets, sast, config)"
            )));
        }
    };
    Ok(text::apply_ignores(content, findings))
}

struct SecurityBase;

impl Guest for SecurityBase {
    fn list_scanners() -> Vec<ScannerSpec> {
        scanner_specs()
    }

    fn scan(name: String, target: ScanTarget) -> Result<Vec<Finding>, SkillError> {
        scan_file(
            &name,
            &target.path,
            &target.content,
            target.language.as_deref(),
        )
    }
}

agent_skill_sdk::wit::scanner_skill::export!(SecurityBase with_types_in agent_skill_sdk::wit::scanner_skill);

#[cfg(test)]
mod tests;
