//! `--scanners a,b`: run only the named scanners.
//!
//! A name is a scanner a selected skill declares (`security_rules.scanners`
//! in its SKILL.yaml), bare (`secrets`: that scanner of every skill that has
//! one) or qualified (`security-base/secrets`), or one of the engine's own:
//! `rules` (the project's and skills' rule files), `deps` (lockfiles
//! against advisories) and `taint` (the taint engine). Anything else is refused, listing the valid names.

use agent_runtime::Skill;
use anyhow::bail;

/// The engine's own scanners, beside the skills' ones.
pub const ENGINE_SCANNERS: [&str; 4] = ["rules", "deps", "plist", "taint"];

/// Which scanners take part; `all` when no `--scanners` was given.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct ScannerFilter {
    /// Names as given (validated); empty: every scanner.
    names: Vec<String>,
}

impl ScannerFilter {
    /// Every scanner.
    pub fn all() -> ScannerFilter {
        ScannerFilter::default()
    }

    /// Checks `wanted` against the scanners `skills` declare and the
    /// engine's own.
    ///
    /// # Errors
    /// A name that is no scanner, naming it and every valid name; an empty
    /// list.
    pub fn new(skills: &[&Skill], wanted: &[String]) -> anyhow::Result<ScannerFilter> {
        let valid = valid_names(skills);
        if wanted.is_empty() {
            bail!(
                "--scanners: name at least one scanner ({})",
                valid.join(", ")
            );
        }
        for w in wanted {
            if !valid.iter().any(|v| v == w) {
                bail!(
                    "--scanners {w}: no such scanner; the scanners are: {}",
                    valid.join(", ")
                );
            }
        }
        Ok(ScannerFilter {
            names: wanted.to_vec(),
        })
    }

    /// Whether the scanner `name` of `skill` runs.
    pub fn runs(&self, skill: &str, name: &str) -> bool {
        self.names.is_empty()
            || self
                .names
                .iter()
                .any(|n| n == name || *n == format!("{skill}/{name}"))
    }

    /// Whether the engine's own scanner (`rules`, `deps`) runs.
    pub fn runs_engine(&self, name: &str) -> bool {
        self.names.is_empty() || self.names.iter().any(|n| n == name)
    }
}

/// Every name `--scanners` accepts: bare and qualified skill scanners, then
/// the engine's own, without repeats.
pub fn valid_names(skills: &[&Skill]) -> Vec<String> {
    let mut out: Vec<String> = Vec::new();
    let mut push = |n: String| {
        if !out.contains(&n) {
            out.push(n);
        }
    };
    for s in skills {
        let Some(sr) = &s.manifest.security_rules else {
            continue;
        };
        for d in &sr.scanners {
            push(d.name.clone());
            push(format!("{}/{}", s.name(), d.name));
        }
    }
    for e in ENGINE_SCANNERS {
        push(e.to_string());
    }
    out
}
