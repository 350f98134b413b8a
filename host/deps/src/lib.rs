//! Dependency audit: lockfile parsers and OSV advisory matching.
//!
//! * [`parse_lockfile`] turns a lockfile (Cargo.lock, package-lock.json, yarn.lock, pnpm-lock.yaml,
//!   go.mod / go.sum, requirements.txt, poetry.lock, Gemfile.lock, Package.resolved, Podfile.lock)
//!   into [`Package`]s, each with the 1-based line where it is declared.
//! * [`OsvDb::load_dir`] reads OSV advisories offline (a directory of OSV JSON, flat or per
//!   ecosystem, and/or osv.dev's `<Ecosystem>/all.zip` exports); [`OsvDb::matches`] matches a
//!   package against them with the ecosystem's version semantics ([`version::compare`]).
//! * [`query_online`] asks the OSV API (`POST /v1/querybatch`, then `GET /v1/vulns/{id}`).

mod cvss;
mod lockfiles;
mod online;
mod osv;
pub mod version;
mod zip;

use std::fmt;

use serde::{Deserialize, Serialize};

pub use lockfiles::{is_lockfile, parse_lockfile};
pub use online::{OSV_API_BASE, OsvClient, query_online, query_online_blocking};
pub use osv::{Advisory, Affected, OsvDb, Range, RangeEvent, cvss_v3_base_score, severity_level};
#[doc(hidden)]
pub use zip::write_deflated as write_test_zip;

/// A package ecosystem, named as OSV names it (also in JSON: `"crates.io"`, `"npm"`, ...; the
/// Rust variant names are read as aliases).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub enum Ecosystem {
    #[serde(rename = "crates.io", alias = "CratesIo")]
    CratesIo,
    #[serde(rename = "npm", alias = "Npm")]
    Npm,
    Go,
    PyPI,
    RubyGems,
    SwiftURL,
    CocoaPods,
}

impl Ecosystem {
    pub const ALL: [Ecosystem; 7] = [
        Ecosystem::CratesIo,
        Ecosystem::Npm,
        Ecosystem::Go,
        Ecosystem::PyPI,
        Ecosystem::RubyGems,
        Ecosystem::SwiftURL,
        Ecosystem::CocoaPods,
    ];

    /// The OSV ecosystem name (`affected[].package.ecosystem`, export directory names).
    pub fn osv_name(self) -> &'static str {
        match self {
            Ecosystem::CratesIo => "crates.io",
            Ecosystem::Npm => "npm",
            Ecosystem::Go => "Go",
            Ecosystem::PyPI => "PyPI",
            Ecosystem::RubyGems => "RubyGems",
            Ecosystem::SwiftURL => "SwiftURL",
            Ecosystem::CocoaPods => "CocoaPods",
        }
    }

    /// The package-URL type (`pkg:<type>/...`).
    pub fn purl_type(self) -> &'static str {
        match self {
            Ecosystem::CratesIo => "cargo",
            Ecosystem::Npm => "npm",
            Ecosystem::Go => "golang",
            Ecosystem::PyPI => "pypi",
            Ecosystem::RubyGems => "gem",
            Ecosystem::SwiftURL => "swift",
            Ecosystem::CocoaPods => "cocoapods",
        }
    }

    /// Parses an OSV ecosystem name. OSV suffixes such as `Debian:11` or `npm:...` are not
    /// ecosystems of ours; only the bare names (case-insensitive) are accepted.
    pub fn from_osv_name(name: &str) -> Option<Ecosystem> {
        let base = name.split(':').next().unwrap_or(name);
        Ecosystem::ALL
            .into_iter()
            .find(|e| e.osv_name().eq_ignore_ascii_case(base))
    }

    /// Normalises a package name the way the ecosystem compares names: PyPI per PEP 503
    /// (lowercase, runs of `-_.` → `-`), RubyGems/crates.io as-is except crates.io treats `-`/`_`
    /// alike, SwiftURL without scheme/`.git`/case, npm and Go case-sensitive.
    pub fn normalize_name(self, name: &str) -> String {
        match self {
            Ecosystem::PyPI => {
                let mut out = String::with_capacity(name.len());
                let mut sep = false;
                for c in name.trim().chars() {
                    if c == '-' || c == '_' || c == '.' {
                        sep = true;
                    } else {
                        if sep && !out.is_empty() {
                            out.push('-');
                        }
                        sep = false;
                        out.push(c.to_ascii_lowercase());
                    }
                }
                out
            }
            Ecosystem::CratesIo => name.trim().replace('_', "-").to_ascii_lowercase(),
            Ecosystem::SwiftURL => {
                let mut n = name.trim().to_ascii_lowercase();
                for scheme in ["https://", "http://", "ssh://", "git://"] {
                    if let Some(rest) = n.strip_prefix(scheme) {
                        n = rest.to_string();
                    }
                }
                if let Some(rest) = n.strip_prefix("git@") {
                    n = rest.replacen(':', "/", 1);
                }
                let n = n.trim_end_matches('/');
                n.strip_suffix(".git").unwrap_or(n).to_string()
            }
            Ecosystem::CocoaPods => name.trim().to_string(),
            Ecosystem::Npm | Ecosystem::Go | Ecosystem::RubyGems => name.trim().to_string(),
        }
    }
}

impl fmt::Display for Ecosystem {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.osv_name())
    }
}

/// One resolved (or, for requirements.txt, possibly unpinned) dependency.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize, Deserialize)]
pub struct Package {
    pub ecosystem: Ecosystem,
    pub name: String,
    /// The resolved version; `""` when the file does not pin one (requirements.txt ranges).
    pub version: String,
    /// The lockfile's path as given to [`parse_lockfile`] (relative to the audited root).
    pub file: String,
    /// 1-based line where the package is declared; 0 if unknown.
    pub line: u32,
    /// Whether the project depends on it directly, when the format says so.
    pub direct: Option<bool>,
}

impl Package {
    /// The package URL (`pkg:npm/%40scope/name@1.0.0`, `pkg:golang/github.com/x/y@v1.2.3`, ...).
    pub fn purl(&self) -> String {
        fn enc(s: &str) -> String {
            let mut out = String::new();
            for b in s.bytes() {
                match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                        out.push(b as char)
                    }
                    _ => out.push_str(&format!("%{b:02X}")),
                }
            }
            out
        }
        let ty = self.ecosystem.purl_type();
        let name = match self.ecosystem {
            Ecosystem::Npm => match self.name.strip_prefix('@').and_then(|n| n.split_once('/')) {
                Some((scope, n)) => format!("{}/{}", enc(&format!("@{scope}")), enc(n)),
                None => enc(&self.name),
            },
            Ecosystem::Go | Ecosystem::SwiftURL => self
                .ecosystem
                .normalize_name(&self.name)
                .split('/')
                .map(enc)
                .collect::<Vec<_>>()
                .join("/"),
            Ecosystem::PyPI => enc(&self.ecosystem.normalize_name(&self.name)),
            _ => enc(&self.name),
        };
        if self.version.is_empty() {
            format!("pkg:{ty}/{name}")
        } else {
            format!("pkg:{ty}/{name}@{}", enc(&self.version))
        }
    }
}

/// Everything that can go wrong reading lockfiles or advisories.
#[derive(Debug, thiserror::Error)]
pub enum DepsError {
    /// Malformed input: the file, the 1-based line (0 if unknown) and what is wrong.
    #[error("{file}:{line}: {message}")]
    Parse {
        file: String,
        line: u32,
        message: String,
    },
    /// The file name is not a lockfile this crate knows.
    #[error("{file}: not a supported lockfile")]
    Unsupported { file: String },
    /// A file could not be read (the error is in the message, so not also a `source`).
    #[error("{path}: {error}")]
    Io { path: String, error: std::io::Error },
    /// An OSV API request failed (transport, HTTP status or response body).
    #[error("OSV API: {0}")]
    Online(String),
}

impl DepsError {
    pub(crate) fn parse(file: &str, line: u32, message: impl Into<String>) -> DepsError {
        DepsError::Parse {
            file: file.to_string(),
            line,
            message: message.into(),
        }
    }
}
