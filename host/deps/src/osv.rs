//! OSV advisories: parsing, the offline database and matching.

use std::cmp::Ordering;
use std::collections::{HashMap, HashSet};
use std::path::Path;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::version;
use crate::{DepsError, Ecosystem, Package};

/// One OSV advisory, reduced to what the audit needs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Advisory {
    pub id: String,
    pub aliases: Vec<String>,
    pub summary: String,
    pub details: String,
    /// The CVSS vector (`CVSS:3.1/...` preferred, else `CVSS:4.0/...`) or, without one, the
    /// `database_specific.severity` word (`HIGH`, `MODERATE`, ...).
    pub severity: Option<String>,
    /// `critical` (≥ 9.0), `high` (≥ 7.0), `medium` (≥ 4.0), `low` (> 0) from the CVSS v3 base
    /// score, else from `database_specific.severity` (`MODERATE` → `medium`).
    pub severity_level: Option<String>,
    /// The CVSS v3 base score, when the advisory carries a v3 vector.
    pub cvss_score: Option<f64>,
    pub affected: Vec<Affected>,
    /// Reference URLs.
    pub references: Vec<String>,
    /// The fixed version for remediation: from [`OsvDb::matches_with_fixed`]/[`crate::query_online`]
    /// the lowest fixed version above the matched package's version; on a freshly loaded
    /// advisory the lowest fixed version of any range (see [`Advisory::fixed_for`]).
    pub fixed: Option<String>,
    pub published: Option<String>,
    pub modified: Option<String>,
    pub withdrawn: Option<String>,
}

/// One `affected[]` entry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Affected {
    /// The OSV ecosystem string as written (`PyPI`, `crates.io`, ...).
    pub ecosystem: String,
    pub name: String,
    pub ranges: Vec<Range>,
    /// Explicitly listed affected versions.
    pub versions: Vec<String>,
}

/// One `ranges[]` entry: `kind` is `SEMVER`, `ECOSYSTEM` or `GIT` (ignored when matching).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct Range {
    pub kind: String,
    pub events: Vec<RangeEvent>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum RangeEvent {
    Introduced(String),
    Fixed(String),
    LastAffected(String),
    Limit(String),
}

impl RangeEvent {
    fn version(&self) -> &str {
        match self {
            RangeEvent::Introduced(v)
            | RangeEvent::Fixed(v)
            | RangeEvent::LastAffected(v)
            | RangeEvent::Limit(v) => v,
        }
    }
}

/// Maps a CVSS base score to a severity word.
pub fn severity_level(score: f64) -> Option<&'static str> {
    if score >= 9.0 {
        Some("critical")
    } else if score >= 7.0 {
        Some("high")
    } else if score >= 4.0 {
        Some("medium")
    } else if score > 0.0 {
        Some("low")
    } else {
        None
    }
}

/// The CVSS v3.0/v3.1 base score of a vector.
pub fn cvss_v3_base_score(vector: &str) -> Option<f64> {
    crate::cvss::v3_base_score(vector)
}

fn word_level(word: &str) -> Option<&'static str> {
    match word.trim().to_ascii_lowercase().as_str() {
        "critical" => Some("critical"),
        "high" | "important" => Some("high"),
        "moderate" | "medium" => Some("medium"),
        "low" => Some("low"),
        _ => None,
    }
}

fn str_field(v: &Value, key: &str) -> Option<String> {
    v.get(key).and_then(Value::as_str).map(str::to_string)
}

impl Advisory {
    /// Parses one OSV JSON record; `file` names it in errors.
    pub fn from_json(file: &str, text: &str) -> Result<Advisory, DepsError> {
        let value: Value = agent_bounded::parse_json(text, file, agent_bounded::Limits::DATA)
            .map_err(|e| match e {
                agent_bounded::Error::Limit(e) => {
                    let line = e.position().map_or(0, |(line, _)| line as u32);
                    DepsError::parse(file, line, e.reason())
                }
                agent_bounded::Error::Parse(e) => {
                    DepsError::parse(file, e.line() as u32, format!("invalid OSV JSON: {e}"))
                }
            })?;
        Advisory::from_value(file, &value)
    }

    /// Builds an advisory from a parsed OSV JSON value.
    pub fn from_value(file: &str, v: &Value) -> Result<Advisory, DepsError> {
        let bad = |m: &str| DepsError::parse(file, 0, format!("invalid OSV record: {m}"));
        if !v.is_object() {
            return Err(bad("not a JSON object"));
        }
        let id = str_field(v, "id").ok_or_else(|| bad("missing string field `id`"))?;
        let bad_id = |m: String| DepsError::parse(file, 0, format!("OSV record {id}: {m}"));
        let aliases = match v.get("aliases") {
            None | Some(Value::Null) => Vec::new(),
            Some(Value::Array(a)) => a
                .iter()
                .filter_map(|x| x.as_str().map(str::to_string))
                .collect(),
            Some(_) => return Err(bad_id("`aliases` is not an array".into())),
        };
        let mut affected = Vec::new();
        match v.get("affected") {
            None | Some(Value::Null) => {}
            Some(Value::Array(list)) => {
                for (i, a) in list.iter().enumerate() {
                    let pkg = a.get("package");
                    let ecosystem = pkg
                        .and_then(|p| str_field(p, "ecosystem"))
                        .unwrap_or_default();
                    let name = pkg.and_then(|p| str_field(p, "name")).unwrap_or_default();
                    let mut ranges = Vec::new();
                    if let Some(rs) = a.get("ranges") {
                        let rs = rs.as_array().ok_or_else(|| {
                            bad_id(format!("affected[{i}].ranges is not an array"))
                        })?;
                        for (j, r) in rs.iter().enumerate() {
                            let kind = str_field(r, "type").ok_or_else(|| {
                                bad_id(format!("affected[{i}].ranges[{j}] has no `type`"))
                            })?;
                            let mut events = Vec::new();
                            let evs =
                                r.get("events").and_then(Value::as_array).ok_or_else(|| {
                                    bad_id(format!("affected[{i}].ranges[{j}] has no `events`"))
                                })?;
                            for e in evs {
                                let obj = e.as_object().ok_or_else(|| {
                                    bad_id(format!(
                                        "affected[{i}].ranges[{j}]: event not an object"
                                    ))
                                })?;
                                for (k, val) in obj {
                                    let Some(s) = val.as_str() else { continue };
                                    let s = s.to_string();
                                    events.push(match k.as_str() {
                                        "introduced" => RangeEvent::Introduced(s),
                                        "fixed" => RangeEvent::Fixed(s),
                                        "last_affected" => RangeEvent::LastAffected(s),
                                        "limit" => RangeEvent::Limit(s),
                                        other => {
                                            return Err(bad_id(format!(
                                                "affected[{i}].ranges[{j}]: unknown event `{other}`"
                                            )));
                                        }
                                    });
                                }
                            }
                            ranges.push(Range { kind, events });
                        }
                    }
                    let versions = a
                        .get("versions")
                        .and_then(Value::as_array)
                        .map(|vs| {
                            vs.iter()
                                .filter_map(|x| x.as_str().map(str::to_string))
                                .collect()
                        })
                        .unwrap_or_default();
                    affected.push(Affected {
                        ecosystem,
                        name,
                        ranges,
                        versions,
                    });
                }
            }
            Some(_) => return Err(bad_id("`affected` is not an array".into())),
        }
        // Severity: CVSS v3 vector (scored), else v4 vector, else database_specific.severity.
        let mut v3 = None;
        let mut v4 = None;
        let sev_lists = std::iter::once(v.get("severity"))
            .chain(
                v.get("affected")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .map(|a| a.get("severity")),
            )
            .flatten();
        for list in sev_lists {
            for s in list.as_array().into_iter().flatten() {
                let ty = str_field(s, "type").unwrap_or_default();
                let score = str_field(s, "score").unwrap_or_default();
                if (ty == "CVSS_V3" || score.starts_with("CVSS:3")) && v3.is_none() {
                    v3 = Some(score);
                } else if (ty == "CVSS_V4" || score.starts_with("CVSS:4")) && v4.is_none() {
                    v4 = Some(score);
                }
            }
        }
        let db_sev = v
            .get("database_specific")
            .and_then(|d| str_field(d, "severity"))
            .or_else(|| {
                v.get("affected")
                    .and_then(Value::as_array)
                    .into_iter()
                    .flatten()
                    .find_map(|a| {
                        a.get("ecosystem_specific")
                            .and_then(|d| str_field(d, "severity"))
                            .or_else(|| {
                                a.get("database_specific")
                                    .and_then(|d| str_field(d, "severity"))
                            })
                    })
            });
        let cvss_score = v3.as_deref().and_then(cvss_v3_base_score);
        let severity_level = cvss_score
            .and_then(severity_level)
            .or_else(|| db_sev.as_deref().and_then(word_level))
            .map(str::to_string);
        let severity = v3.or(v4).or(db_sev);
        let references = v
            .get("references")
            .and_then(Value::as_array)
            .map(|rs| rs.iter().filter_map(|r| str_field(r, "url")).collect())
            .unwrap_or_default();
        let mut adv = Advisory {
            id,
            aliases,
            summary: str_field(v, "summary").unwrap_or_default(),
            details: str_field(v, "details").unwrap_or_default(),
            severity,
            severity_level,
            cvss_score,
            affected,
            references,
            fixed: None,
            published: str_field(v, "published"),
            modified: str_field(v, "modified"),
            withdrawn: str_field(v, "withdrawn"),
        };
        adv.fixed = adv.lowest_fixed();
        Ok(adv)
    }

    fn entries_for<'a>(&'a self, pkg: &'a Package) -> impl Iterator<Item = &'a Affected> + 'a {
        let want = pkg.ecosystem.normalize_name(&pkg.name);
        self.affected.iter().filter(move |a| {
            Ecosystem::from_osv_name(&a.ecosystem) == Some(pkg.ecosystem)
                && pkg.ecosystem.normalize_name(&a.name) == want
        })
    }

    /// Whether this advisory affects the package at its version (an unpinned package — empty
    /// version — is never affected).
    pub fn affects(&self, pkg: &Package) -> bool {
        if pkg.version.trim().is_empty() || self.withdrawn.is_some() {
            return false;
        }
        self.entries_for(pkg)
            .any(|a| affected_entry_includes(pkg.ecosystem, a, pkg.version.trim()))
    }

    /// The lowest fixed version above the package's version, across the entries for it.
    pub fn fixed_for(&self, pkg: &Package) -> Option<String> {
        let eco = pkg.ecosystem;
        let v = pkg.version.trim();
        let mut best: Option<String> = None;
        for a in self.entries_for(pkg) {
            for r in &a.ranges {
                if r.kind == "GIT" {
                    continue;
                }
                for e in &r.events {
                    let RangeEvent::Fixed(f) = e else { continue };
                    if !v.is_empty() && cmp_in(eco, &r.kind, f, v) != Some(Ordering::Greater) {
                        continue;
                    }
                    best = match best {
                        Some(b) if cmp_in(eco, &r.kind, &b, f) == Some(Ordering::Less) => Some(b),
                        Some(b) if cmp_in(eco, &r.kind, &b, f).is_none() => Some(b),
                        _ => Some(f.clone()),
                    };
                }
            }
        }
        best
    }

    /// The lowest fixed version of any range (before a package is known).
    fn lowest_fixed(&self) -> Option<String> {
        let mut best: Option<(Ecosystem, String, String)> = None;
        for a in &self.affected {
            let Some(eco) = Ecosystem::from_osv_name(&a.ecosystem) else {
                continue;
            };
            for r in a.ranges.iter().filter(|r| r.kind != "GIT") {
                for e in &r.events {
                    let RangeEvent::Fixed(f) = e else { continue };
                    let replace = match &best {
                        None => true,
                        Some((_, kind, b)) => cmp_in(eco, kind, f, b) == Some(Ordering::Less),
                    };
                    if replace {
                        best = Some((eco, r.kind.clone(), f.clone()));
                    }
                }
            }
        }
        best.map(|(_, _, f)| f)
    }
}

/// Compares within a range of `kind`: SEMVER ranges use SemVer (Go's with its `v`/`+incompatible`
/// handling), ECOSYSTEM ranges the ecosystem's own ordering.
fn cmp_in(eco: Ecosystem, kind: &str, a: &str, b: &str) -> Option<Ordering> {
    if kind == "SEMVER" {
        match eco {
            Ecosystem::Go => Some(version::parse_go(a)?.cmp_precedence(&version::parse_go(b)?)),
            _ => match (version::parse_semver(a), version::parse_semver(b)) {
                (Some(x), Some(y)) => Some(x.cmp_precedence(&y)),
                _ => version::compare(eco, a, b),
            },
        }
    } else {
        version::compare(eco, a, b)
    }
}

fn affected_entry_includes(eco: Ecosystem, a: &Affected, v: &str) -> bool {
    if a.versions.iter().any(|x| {
        x.trim() == v
            || (eco == Ecosystem::PyPI && version::compare(eco, x, v) == Some(Ordering::Equal))
    }) {
        return true;
    }
    a.ranges
        .iter()
        .filter(|r| r.kind == "SEMVER" || r.kind == "ECOSYSTEM")
        .any(|r| range_includes(eco, r, v))
}

fn range_includes(eco: Ecosystem, r: &Range, v: &str) -> bool {
    let kind = r.kind.as_str();
    if cmp_in(eco, kind, v, v).is_none() {
        return false;
    }
    // Sort events by version ("0" lowest); events whose version does not parse are dropped.
    let mut events: Vec<&RangeEvent> = r
        .events
        .iter()
        .filter(|e| e.version() == "0" || cmp_in(eco, kind, e.version(), e.version()).is_some())
        .collect();
    let limits: Vec<&str> = events
        .iter()
        .filter_map(|e| match e {
            RangeEvent::Limit(l) if l != "*" => Some(l.as_str()),
            _ => None,
        })
        .collect();
    events.sort_by(|x, y| match (x.version() == "0", y.version() == "0") {
        (true, true) => Ordering::Equal,
        (true, false) => Ordering::Less,
        (false, true) => Ordering::Greater,
        (false, false) => cmp_in(eco, kind, x.version(), y.version()).unwrap_or(Ordering::Equal),
    });
    let ge = |x: &str| x == "0" || cmp_in(eco, kind, v, x) != Some(Ordering::Less);
    let mut affected = false;
    for e in events {
        match e {
            RangeEvent::Introduced(x) => {
                if ge(x) {
                    affected = true;
                }
            }
            RangeEvent::Fixed(x) => {
                if x != "0" && ge(x) {
                    affected = false;
                }
            }
            RangeEvent::LastAffected(x) => {
                if cmp_in(eco, kind, v, x) == Some(Ordering::Greater) {
                    affected = false;
                }
            }
            RangeEvent::Limit(_) => {}
        }
    }
    if affected && !limits.is_empty() {
        // Outside every limit: not affected.
        affected = limits
            .iter()
            .any(|l| cmp_in(eco, kind, v, l) == Some(Ordering::Less));
    }
    affected
}

/// An offline advisory database.
#[derive(Debug, Default, Clone)]
pub struct OsvDb {
    advisories: Vec<Advisory>,
    index: HashMap<(Ecosystem, String), Vec<usize>>,
    ids: HashSet<String>,
}

impl OsvDb {
    pub fn new() -> OsvDb {
        OsvDb::default()
    }

    /// Builds a database from advisories (duplicated ids keep the first).
    pub fn from_advisories(advisories: impl IntoIterator<Item = Advisory>) -> OsvDb {
        let mut db = OsvDb::new();
        for a in advisories {
            db.insert(a);
        }
        db
    }

    /// Adds one advisory; advisories for none of our ecosystems, withdrawn ones and duplicate ids
    /// are dropped. Returns whether it was kept.
    pub fn insert(&mut self, adv: Advisory) -> bool {
        if adv.withdrawn.is_some() || self.ids.contains(&adv.id) {
            return false;
        }
        let keys: HashSet<(Ecosystem, String)> = adv
            .affected
            .iter()
            .filter_map(|a| {
                let eco = Ecosystem::from_osv_name(&a.ecosystem)?;
                Some((eco, eco.normalize_name(&a.name)))
            })
            .collect();
        if keys.is_empty() {
            return false;
        }
        let idx = self.advisories.len();
        self.ids.insert(adv.id.clone());
        self.advisories.push(adv);
        for k in keys {
            self.index.entry(k).or_default().push(idx);
        }
        true
    }

    /// Loads a directory (recursively): `*.json` files are single OSV records, `*.zip` files are
    /// osv.dev exports (`<Ecosystem>/all.zip`) of such records. Files that are neither are skipped;
    /// a malformed record or archive is an error naming the file.
    pub fn load_dir(path: impl AsRef<Path>) -> Result<OsvDb, DepsError> {
        let mut db = OsvDb::new();
        db.add_dir(path.as_ref())?;
        Ok(db)
    }

    /// Adds the advisories of a directory (see [`OsvDb::load_dir`]).
    pub fn add_dir(&mut self, dir: &Path) -> Result<(), DepsError> {
        let io = |p: &Path, e| DepsError::Io {
            path: p.display().to_string(),
            error: e,
        };
        let mut entries: Vec<_> = std::fs::read_dir(dir)
            .map_err(|e| io(dir, e))?
            .collect::<Result<Vec<_>, _>>()
            .map_err(|e| io(dir, e))?;
        entries.sort_by_key(|e| e.file_name());
        for entry in entries {
            let p = entry.path();
            let ft = entry.file_type().map_err(|e| io(&p, e))?;
            let name = entry.file_name().to_string_lossy().into_owned();
            if ft.is_dir() {
                if !name.starts_with('.') {
                    self.add_dir(&p)?;
                }
            } else if name.ends_with(".json") {
                let text = std::fs::read_to_string(&p).map_err(|e| io(&p, e))?;
                self.insert(Advisory::from_json(&p.display().to_string(), &text)?);
            } else if name.ends_with(".zip") {
                let bytes = std::fs::read(&p).map_err(|e| io(&p, e))?;
                self.add_zip(&p.display().to_string(), &bytes)?;
            }
        }
        Ok(())
    }

    /// Adds the `*.json` records of a zip export held in memory; `file` names it in errors.
    pub fn add_zip(&mut self, file: &str, bytes: &[u8]) -> Result<(), DepsError> {
        let entries = crate::zip::read_all(bytes).map_err(|m| DepsError::parse(file, 0, m))?;
        for e in entries.iter().filter(|e| e.name.ends_with(".json")) {
            let text = std::str::from_utf8(&e.data)
                .map_err(|_| DepsError::parse(&format!("{file}!{}", e.name), 0, "not UTF-8"))?;
            self.insert(Advisory::from_json(&format!("{file}!{}", e.name), text)?);
        }
        Ok(())
    }

    pub fn len(&self) -> usize {
        self.advisories.len()
    }

    pub fn is_empty(&self) -> bool {
        self.advisories.is_empty()
    }

    pub fn advisories(&self) -> &[Advisory] {
        &self.advisories
    }

    /// Looks an advisory up by id or alias.
    pub fn get(&self, id: &str) -> Option<&Advisory> {
        self.advisories
            .iter()
            .find(|a| a.id == id || a.aliases.iter().any(|x| x == id))
    }

    /// The advisories affecting the package at its version.
    pub fn matches(&self, pkg: &Package) -> Vec<&Advisory> {
        let key = (pkg.ecosystem, pkg.ecosystem.normalize_name(&pkg.name));
        self.index
            .get(&key)
            .into_iter()
            .flatten()
            .map(|&i| &self.advisories[i])
            .filter(|a| a.affects(pkg))
            .collect()
    }

    /// Like [`OsvDb::matches`], with the fixed version for this package (the lowest fixed version
    /// above its version).
    pub fn matches_with_fixed(&self, pkg: &Package) -> Vec<(&Advisory, Option<String>)> {
        self.matches(pkg)
            .into_iter()
            .map(|a| (a, a.fixed_for(pkg)))
            .collect()
    }
}
