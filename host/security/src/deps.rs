//! Dependency audit glue: lockfiles found by the walk, parsed by
//! `agent-deps`, matched against an offline OSV directory and/or the OSV
//! API; banned dependencies from `.security.yaml`.

use std::collections::{BTreeMap, HashSet};
use std::path::Path;

use agent_deps::{Advisory, OsvClient, OsvDb, Package};
use serde::{Deserialize, Serialize};

use crate::config::BannedDependency;
use crate::finding::{Confidence, Finding, Location, Severity};
use crate::rules::cut;
use crate::walk::WalkedFile;

/// One advisory matched to one package, for the SBOM's vulnerabilities.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct DependencyVulnerability {
    /// Advisory id (`GHSA-...`, `RUSTSEC-...`, `PYSEC-...`).
    pub id: String,
    /// Other ids (CVE...).
    pub aliases: Vec<String>,
    /// One line.
    pub summary: String,
    /// Longer text.
    pub details: String,
    /// Severity used for the finding.
    pub severity: Severity,
    /// The CVSS v3 base score, when known.
    pub cvss_score: Option<f64>,
    /// The CVSS vector (`CVSS:3.1/...`, `CVSS:4.0/...`), when the advisory carries one.
    pub cvss_vector: Option<String>,
    /// The database's own severity word (`database_specific.severity`: `HIGH`, `MODERATE`, ...)
    /// when the advisory carries no CVSS vector.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub database_severity: Option<String>,
    /// The lowest fixed version above the package's, when published.
    pub fixed: Option<String>,
    /// Links.
    pub references: Vec<String>,
    /// The affected package's purl (its `bom-ref` in the SBOM).
    pub purl: String,
    /// Package name and version, for reports.
    pub package: String,
    /// Installed version.
    pub version: String,
}

/// What the dependency audit found.
#[derive(Debug, Default)]
pub struct DepsOutcome {
    /// Unique packages (by ecosystem, name, version), in lockfile order.
    pub packages: Vec<Package>,
    /// Findings (`DEP-<ID>`, `DEP-BANNED`).
    pub findings: Vec<Finding>,
    /// Advisory matches.
    pub vulnerabilities: Vec<DependencyVulnerability>,
    /// Problems (unparsable lockfiles, an unreachable API), not fatal.
    pub errors: Vec<(String, String)>,
}

/// Where advisories come from.
#[derive(Debug, Clone, Default)]
pub struct AdvisorySources<'a> {
    /// An offline OSV directory (JSON files and/or `all.zip` exports).
    pub osv_dir: Option<&'a Path>,
    /// Ask the OSV API too.
    pub online: bool,
    /// Another API base (tests, mirrors).
    pub api_base: Option<&'a str>,
}

fn severity_of(adv: &Advisory) -> Severity {
    if let Some(level) = &adv.severity_level
        && let Ok(s) = level.parse()
    {
        return s;
    }
    if let Some(score) = adv.cvss_score {
        return Severity::from_cvss_score(score);
    }
    Severity::Medium
}

/// Parses the lockfiles and audits the packages.
pub fn audit_dependencies(
    lockfiles: &[WalkedFile],
    sources: &AdvisorySources<'_>,
    banned: &[BannedDependency],
) -> DepsOutcome {
    let mut out = DepsOutcome::default();
    let mut seen = HashSet::new();
    for lf in lockfiles {
        let text = match agent_runtime::open_regular(&lf.abs).and_then(std::io::read_to_string) {
            Ok(t) => t,
            Err(e) => {
                out.errors
                    .push((lf.path.clone(), format!("cannot read it: {e}")));
                continue;
            }
        };
        match agent_deps::parse_lockfile(&lf.path, &text) {
            Ok(pkgs) => {
                for p in pkgs {
                    if seen.insert((p.ecosystem, p.name.clone(), p.version.clone())) {
                        out.packages.push(p);
                    }
                }
            }
            Err(e) => out.errors.push((lf.path.clone(), e.to_string())),
        }
    }

    // Advisories per package index, by id.
    let mut matched: BTreeMap<usize, BTreeMap<String, (Advisory, Option<String>)>> =
        BTreeMap::new();
    if let Some(dir) = sources.osv_dir {
        match OsvDb::load_dir(dir) {
            Ok(db) => {
                for (i, p) in out.packages.iter().enumerate() {
                    if p.version.is_empty() {
                        continue;
                    }
                    for (adv, fixed) in db.matches_with_fixed(p) {
                        matched
                            .entry(i)
                            .or_default()
                            .insert(adv.id.clone(), (adv.clone(), fixed));
                    }
                }
            }
            Err(e) => out
                .errors
                .push((dir.display().to_string(), format!("OSV directory: {e}"))),
        }
    }
    if sources.online {
        let pinned: Vec<(usize, Package)> = out
            .packages
            .iter()
            .enumerate()
            .filter(|(_, p)| !p.version.is_empty())
            .map(|(i, p)| (i, p.clone()))
            .collect();
        let list: Vec<Package> = pinned.iter().map(|(_, p)| p.clone()).collect();
        let client = match sources.api_base {
            Some(b) => OsvClient::with_base_url(b),
            None => OsvClient::new(),
        };
        match agent_deps::query_online_blocking(&client, &list) {
            Ok(found) => {
                for (j, adv) in found {
                    let Some((i, _)) = pinned.get(j) else {
                        continue;
                    };
                    let fixed = adv.fixed.clone();
                    matched
                        .entry(*i)
                        .or_default()
                        .entry(adv.id.clone())
                        .or_insert((adv, fixed));
                }
            }
            Err(e) => out
                .errors
                .push(("osv.dev".to_string(), format!("online query: {e}"))),
        }
    }

    for (i, advs) in matched {
        let p = &out.packages[i];
        for (_, (adv, fixed)) in advs {
            let severity = severity_of(&adv);
            let title = if adv.summary.is_empty() {
                format!("{} {} is affected by {}", p.name, p.version, adv.id)
            } else {
                format!("{} {}: {}", p.name, p.version, adv.summary)
            };
            let remediation = match &fixed {
                Some(v) => format!("Upgrade {} to {v} or later.", p.name),
                None => format!(
                    "No fixed version of {} is published for {}; replace the package or mitigate.",
                    p.name, adv.id
                ),
            };
            let mut refs = vec![format!("https://osv.dev/vulnerability/{}", adv.id)];
            refs.extend(adv.references.iter().cloned());
            let mut f = Finding::new(
                format!("DEP-{}", adv.id),
                "deps",
                severity,
                "vulnerable-dependency",
                title,
                package_location(p),
            );
            f.description = if adv.details.is_empty() {
                adv.summary.clone()
            } else {
                cut(&adv.details, 4000)
            };
            f.evidence = format!("{}@{}", p.name, p.version);
            f.remediation = remediation;
            f.confidence = Confidence::High;
            f.cwe = Some("CWE-1395".into());
            f.owasp = Some("A06:2021".into());
            f.references = refs.clone();
            f.metadata = package_metadata(p);
            f.metadata.insert("advisory".into(), adv.id.clone());
            if !adv.aliases.is_empty() {
                f.metadata.insert("aliases".into(), adv.aliases.join(","));
            }
            if let Some(v) = &fixed {
                f.metadata.insert("fixed_version".into(), v.clone());
            }
            f.fingerprint(None);
            out.findings.push(f);
            out.vulnerabilities.push(DependencyVulnerability {
                id: adv.id.clone(),
                aliases: adv.aliases.clone(),
                summary: adv.summary.clone(),
                details: cut(&adv.details, 4000),
                severity,
                cvss_score: adv.cvss_score,
                cvss_vector: adv.severity.clone().filter(|s| is_cvss_vector(s)),
                database_severity: adv.severity.clone().filter(|s| !is_cvss_vector(s)),
                fixed,
                references: refs,
                purl: p.purl(),
                package: p.name.clone(),
                version: p.version.clone(),
            });
        }
    }

    for p in &out.packages {
        for b in banned {
            if let Some(eco) = &b.ecosystem
                && !eco.eq_ignore_ascii_case(p.ecosystem.osv_name())
            {
                continue;
            }
            if p.ecosystem.normalize_name(&b.package) != p.ecosystem.normalize_name(&p.name) {
                continue;
            }
            let mut f = Finding::new(
                "DEP-BANNED",
                "deps",
                Severity::High,
                "supply-chain",
                format!("Banned dependency {}", p.name),
                package_location(p),
            );
            f.description = format!("{} is banned by the project: {}", p.name, b.reason);
            f.evidence = if p.version.is_empty() {
                p.name.clone()
            } else {
                format!("{}@{}", p.name, p.version)
            };
            f.remediation = b.reason.clone();
            f.confidence = Confidence::High;
            f.metadata = package_metadata(p);
            f.metadata.insert("reason".into(), b.reason.clone());
            f.fingerprint(None);
            out.findings.push(f);
        }
    }
    out
}

fn package_location(p: &Package) -> Location {
    Location {
        file: p.file.clone(),
        start_line: p.line,
        end_line: p.line,
        start_column: 0,
        end_column: 0,
        function: None,
    }
}

fn package_metadata(p: &Package) -> BTreeMap<String, String> {
    let mut m = BTreeMap::new();
    m.insert("package".into(), p.name.clone());
    m.insert("version".into(), p.version.clone());
    m.insert("ecosystem".into(), p.ecosystem.osv_name().to_string());
    m.insert("purl".into(), p.purl());
    m
}

/// Whether an advisory's severity string is a CVSS vector (`CVSS:3.1/...`) rather than a
/// database's severity word (`HIGH`).
fn is_cvss_vector(severity: &str) -> bool {
    severity.starts_with("CVSS:")
}
