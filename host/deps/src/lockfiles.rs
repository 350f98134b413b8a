//! Lockfile parsers. Each reports the 1-based line where a package is declared.

use std::collections::{HashMap, HashSet};

use agent_bounded::Limits;
use serde_json::Value;

use crate::{DepsError, Ecosystem, Package};

fn base_name(path: &str) -> &str {
    path.rsplit(['/', '\\']).next().unwrap_or(path)
}

#[derive(Clone, Copy)]
enum Kind {
    CargoLock,
    PackageLock,
    YarnLock,
    PnpmLock,
    GoMod,
    GoSum,
    Requirements,
    PoetryLock,
    GemfileLock,
    PackageResolved,
    PodfileLock,
}

fn kind_of(path: &str) -> Option<Kind> {
    let name = base_name(path);
    Some(match name {
        "Cargo.lock" => Kind::CargoLock,
        "package-lock.json" | "npm-shrinkwrap.json" => Kind::PackageLock,
        "yarn.lock" => Kind::YarnLock,
        "pnpm-lock.yaml" => Kind::PnpmLock,
        "go.mod" => Kind::GoMod,
        "go.sum" => Kind::GoSum,
        "poetry.lock" => Kind::PoetryLock,
        "Gemfile.lock" | "gems.locked" => Kind::GemfileLock,
        "Package.resolved" => Kind::PackageResolved,
        "Podfile.lock" => Kind::PodfileLock,
        n if n.ends_with(".txt") && n.starts_with("requirements") => Kind::Requirements,
        _ => return None,
    })
}

/// Whether the file name is a lockfile [`parse_lockfile`] understands (`Cargo.lock`,
/// `package-lock.json`, `npm-shrinkwrap.json`, `yarn.lock`, `pnpm-lock.yaml`, `go.mod`, `go.sum`,
/// `requirements*.txt`, `poetry.lock`, `Gemfile.lock`, `gems.locked`, `Package.resolved`,
/// `Podfile.lock`).
pub fn is_lockfile(path: &str) -> bool {
    kind_of(path).is_some()
}

/// Parses a lockfile by its file name. `path` is recorded in each [`Package::file`].
pub fn parse_lockfile(path: &str, text: &str) -> Result<Vec<Package>, DepsError> {
    let kind = kind_of(path).ok_or_else(|| DepsError::Unsupported {
        file: path.to_string(),
    })?;
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let p = Parser { file: path };
    match kind {
        Kind::CargoLock => p.cargo_lock(text),
        Kind::PackageLock => p.package_lock(text),
        Kind::YarnLock => p.yarn_lock(text),
        Kind::PnpmLock => p.pnpm_lock(text),
        Kind::GoMod => p.go_mod(text),
        Kind::GoSum => p.go_sum(text),
        Kind::Requirements => p.requirements(text),
        Kind::PoetryLock => p.poetry_lock(text),
        Kind::GemfileLock => p.gemfile_lock(text),
        Kind::PackageResolved => p.package_resolved(text),
        Kind::PodfileLock => p.podfile_lock(text),
    }
}

struct Parser<'a> {
    file: &'a str,
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    if s.len() >= 2
        && ((s.starts_with('"') && s.ends_with('"')) || (s.starts_with('\'') && s.ends_with('\'')))
    {
        &s[1..s.len() - 1]
    } else {
        s
    }
}

/// 1-based line of a byte offset.
fn line_of(text: &str, offset: usize) -> u32 {
    text[..offset.min(text.len())]
        .bytes()
        .filter(|&b| b == b'\n')
        .count() as u32
        + 1
}

/// `key = "value"` in a TOML line.
fn toml_kv(line: &str) -> Option<(&str, &str)> {
    let (k, v) = line.split_once('=')?;
    Some((k.trim(), unquote(v.trim())))
}

impl Parser<'_> {
    fn pkg(&self, ecosystem: Ecosystem, name: &str, version: &str, line: u32) -> Package {
        Package {
            ecosystem,
            name: name.to_string(),
            version: version.to_string(),
            file: self.file.to_string(),
            line,
            direct: None,
        }
    }

    fn err(&self, line: u32, msg: impl Into<String>) -> DepsError {
        DepsError::parse(self.file, line, msg)
    }

    /// A lockfile over a size or nesting limit, at the line where it crossed it.
    fn limit(&self, e: &agent_bounded::LimitError) -> DepsError {
        let line = e.position().map_or(0, |(line, _)| line as u32);
        self.err(line, e.reason())
    }

    fn toml_check(&self, text: &str) -> Result<(), DepsError> {
        if let Err(e) = text.parse::<toml::Table>() {
            let line = e.span().map(|s| line_of(text, s.start)).unwrap_or(0);
            let msg = e.message().to_string();
            return Err(self.err(line, format!("invalid TOML: {msg}")));
        }
        Ok(())
    }

    /// `[[package]]` blocks of a TOML lockfile: (name, name line, version, other fields).
    fn toml_packages(&self, text: &str) -> Result<Vec<TomlPkg>, DepsError> {
        self.toml_check(text)?;
        let mut out: Vec<TomlPkg> = Vec::new();
        let mut cur: Option<TomlPkg> = None;
        let mut in_array: Option<String> = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            let line = raw.trim();
            if let Some(key) = &in_array {
                if let Some(c) = cur.as_mut() {
                    let items = c.arrays.entry(key.clone()).or_default();
                    for item in line.trim_end_matches(',').split(',') {
                        let item =
                            unquote(item.trim().trim_start_matches('[').trim_end_matches(']'));
                        if !item.is_empty() {
                            items.push(item.to_string());
                        }
                    }
                }
                if line.ends_with(']') {
                    in_array = None;
                }
                continue;
            }
            if line.starts_with('[') {
                if let Some(c) = cur.take() {
                    out.push(c);
                }
                if line == "[[package]]" {
                    cur = Some(TomlPkg {
                        header: n,
                        ..TomlPkg::default()
                    });
                }
                continue;
            }
            let Some(c) = cur.as_mut() else { continue };
            let Some((k, v)) = toml_kv(line) else {
                continue;
            };
            match k {
                "name" => {
                    c.name = v.to_string();
                    c.line = n;
                }
                "version" => c.version = v.to_string(),
                "source" => c.source = Some(v.to_string()),
                "dependencies" => {
                    let v = v.trim();
                    if v.starts_with('[') {
                        let items = c.arrays.entry(k.to_string()).or_default();
                        for item in v.trim_start_matches('[').trim_end_matches(']').split(',') {
                            let item = unquote(item.trim());
                            if !item.is_empty() {
                                items.push(item.to_string());
                            }
                        }
                        if !v.ends_with(']') {
                            in_array = Some(k.to_string());
                        }
                    }
                }
                _ => {}
            }
        }
        if let Some(c) = cur.take() {
            out.push(c);
        }
        for p in &out {
            if p.name.is_empty() {
                return Err(self.err(p.header, "[[package]] without a `name`"));
            }
        }
        Ok(out)
    }

    fn cargo_lock(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let pkgs = self.toml_packages(text)?;
        // Local (workspace/path) packages have no source; what they depend on is direct.
        let mut direct: HashSet<String> = HashSet::new();
        for p in pkgs.iter().filter(|p| p.source.is_none()) {
            for d in p.arrays.get("dependencies").into_iter().flatten() {
                direct.insert(d.split_whitespace().next().unwrap_or("").to_string());
            }
        }
        let mut out = Vec::new();
        for p in pkgs.iter().filter(|p| p.source.is_some()) {
            if p.version.is_empty() {
                return Err(self.err(p.line, format!("package `{}` has no version", p.name)));
            }
            let mut pkg = self.pkg(Ecosystem::CratesIo, &p.name, &p.version, p.line);
            pkg.direct = Some(direct.contains(&p.name));
            out.push(pkg);
        }
        Ok(out)
    }

    fn poetry_lock(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let mut out = Vec::new();
        for p in self.toml_packages(text)? {
            if p.version.is_empty() {
                return Err(self.err(p.line, format!("package `{}` has no version", p.name)));
            }
            // poetry.lock does not say which packages are direct (`category` is main/dev).
            out.push(self.pkg(Ecosystem::PyPI, &p.name, &p.version, p.line));
        }
        Ok(out)
    }

    fn json(&self, text: &str) -> Result<Value, DepsError> {
        agent_bounded::parse_json(text, self.file, Limits::DATA).map_err(|e| match e {
            agent_bounded::Error::Limit(e) => self.limit(&e),
            agent_bounded::Error::Parse(e) => {
                self.err(e.line() as u32, format!("invalid JSON: {e}"))
            }
        })
    }

    fn package_lock(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let v = self.json(text)?;
        if !v.is_object() {
            return Err(self.err(1, "package-lock.json is not a JSON object"));
        }
        // Line of each `"node_modules/..."` key.
        let mut key_lines: HashMap<&str, u32> = HashMap::new();
        for (i, raw) in text.lines().enumerate() {
            let t = raw.trim_start();
            if let Some(rest) = t.strip_prefix('"')
                && let Some(end) = rest.find('"')
                && rest[end + 1..].trim_start().starts_with(':')
            {
                key_lines.entry(&rest[..end]).or_insert(i as u32 + 1);
            }
        }
        let mut out = Vec::new();
        if let Some(packages) = v.get("packages").and_then(Value::as_object) {
            let root_deps: HashSet<String> = packages
                .get("")
                .map(|root| {
                    [
                        "dependencies",
                        "devDependencies",
                        "optionalDependencies",
                        "peerDependencies",
                    ]
                    .iter()
                    .filter_map(|k| root.get(*k).and_then(Value::as_object))
                    .flat_map(|m| m.keys().cloned())
                    .collect()
                })
                .unwrap_or_default();
            for (key, entry) in packages {
                let Some(idx) = key.rfind("node_modules/") else {
                    continue;
                };
                if entry.get("link").and_then(Value::as_bool) == Some(true) {
                    continue;
                }
                let name = entry
                    .get("name")
                    .and_then(Value::as_str)
                    .unwrap_or(&key[idx + "node_modules/".len()..]);
                let line = key_lines.get(key.as_str()).copied().unwrap_or(0);
                let Some(version) = entry.get("version").and_then(Value::as_str) else {
                    // Bundled/optional entries without a version carry nothing to audit.
                    continue;
                };
                let mut pkg = self.pkg(Ecosystem::Npm, name, version, line);
                let top = idx == 0;
                pkg.direct = Some(top && root_deps.contains(name));
                out.push(pkg);
            }
        } else if let Some(deps) = v.get("dependencies").and_then(Value::as_object) {
            // lockfileVersion 1: a nested tree keyed by name; lines found in document order.
            let mut cursor = 0usize;
            let lines: Vec<&str> = text.lines().collect();
            self.npm_v1(deps, &lines, &mut cursor, true, &mut out);
        } else {
            return Err(self.err(1, "neither `packages` nor `dependencies` present"));
        }
        out.sort_by_key(|p| p.line);
        Ok(out)
    }

    fn npm_v1(
        &self,
        deps: &serde_json::Map<String, Value>,
        lines: &[&str],
        cursor: &mut usize,
        top: bool,
        out: &mut Vec<Package>,
    ) {
        for (name, entry) in deps {
            let needle = format!("\"{name}\"");
            let mut line = 0;
            if let Some(off) = lines[*cursor..]
                .iter()
                .position(|l| l.trim_start().starts_with(&needle))
            {
                *cursor += off;
                line = *cursor as u32 + 1;
            }
            if let Some(version) = entry.get("version").and_then(Value::as_str)
                && !version.starts_with("file:")
            {
                let mut pkg = self.pkg(Ecosystem::Npm, name, version, line);
                pkg.direct = if top { None } else { Some(false) };
                out.push(pkg);
            }
            if let Some(sub) = entry.get("dependencies").and_then(Value::as_object) {
                self.npm_v1(sub, lines, cursor, false, out);
            }
        }
    }

    fn yarn_lock(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let mut out: Vec<Package> = Vec::new();
        let mut cur: Option<(String, u32, bool)> = None; // name, line, has version
        let flush = |cur: &mut Option<(String, u32, bool)>| -> Result<(), DepsError> {
            if let Some((name, line, false)) = cur.take() {
                return Err(self.err(line, format!("entry `{name}` has no version")));
            }
            Ok(())
        };
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
                continue;
            }
            if !raw.starts_with(' ') && !raw.starts_with('\t') {
                flush(&mut cur)?;
                let header = raw.trim_end();
                let Some(header) = header.strip_suffix(':') else {
                    return Err(self.err(
                        n,
                        format!("expected `descriptor:` entry header, found `{header}`"),
                    ));
                };
                if header == "__metadata" || header.is_empty() {
                    cur = None;
                    continue;
                }
                let first = header
                    .split(',')
                    .next()
                    .unwrap_or("")
                    .trim()
                    .trim_matches('"');
                let at = first.get(1..).and_then(|f| f.find('@')).map(|p| p + 1);
                let name = match at {
                    Some(p) => &first[..p],
                    None => {
                        return Err(self.err(n, format!("cannot read package name from `{first}`")));
                    }
                };
                let range = at.map(|p| &first[p + 1..]).unwrap_or("");
                if range.starts_with("workspace:")
                    || range.starts_with("link:")
                    || range.starts_with("portal:")
                    || range.starts_with("file:")
                {
                    cur = None;
                    continue;
                }
                cur = Some((name.to_string(), n, false));
                continue;
            }
            let t = raw.trim();
            let Some((name, line, has)) = cur.as_mut() else {
                continue;
            };
            if *has || raw.starts_with("    ") {
                continue;
            }
            let version = if let Some(rest) = t.strip_prefix("version:") {
                Some(unquote(rest))
            } else {
                t.strip_prefix("version ").map(unquote)
            };
            if let Some(version) = version {
                *has = true;
                if version == "0.0.0-use.local" {
                    continue;
                }
                if !out.iter().any(|p| p.name == *name && p.version == version) {
                    out.push(self.pkg(Ecosystem::Npm, name, version, *line));
                }
            }
        }
        flush(&mut cur)?;
        Ok(out)
    }

    fn pnpm_lock(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        match agent_bounded::parse_yaml::<serde_yaml::Value>(text, self.file, Limits::DATA) {
            Ok(_) => {}
            Err(agent_bounded::Error::Limit(e)) => return Err(self.limit(&e)),
            Err(agent_bounded::Error::Parse(e)) => {
                let line = e.location().map(|l| l.line() as u32).unwrap_or(0);
                return Err(self.err(line, format!("invalid YAML: {e}")));
            }
        }
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        let mut in_packages = false;
        let mut key_indent: Option<usize> = None;
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            if raw.trim().is_empty() || raw.trim_start().starts_with('#') {
                continue;
            }
            let indent = raw.len() - raw.trim_start().len();
            if indent == 0 {
                let t = raw.trim_end();
                in_packages = t == "packages:" || t == "snapshots:";
                key_indent = None;
                continue;
            }
            if !in_packages {
                continue;
            }
            let ki = *key_indent.get_or_insert(indent);
            if indent != ki {
                continue;
            }
            let key = raw.trim().trim_end_matches(':').trim_end_matches(" {}");
            let key = unquote(key.trim_end_matches(':'));
            let Some((name, version)) = split_pnpm_key(key) else {
                return Err(self.err(
                    n,
                    format!("cannot read package and version from key `{key}`"),
                ));
            };
            if version.starts_with("link:") || version.starts_with("file:") {
                continue;
            }
            if seen.insert((name.clone(), version.clone())) {
                out.push(self.pkg(Ecosystem::Npm, &name, &version, n));
            }
        }
        Ok(out)
    }

    fn go_mod(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let mut out = Vec::new();
        let mut in_require = false;
        let mut in_other_block = false;
        let mut replaces: Vec<(String, Option<String>, String, String)> = Vec::new();
        let mut in_replace = false;
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            let (code, comment) = match raw.find("//") {
                Some(p) => (&raw[..p], &raw[p + 2..]),
                None => (raw, ""),
            };
            let t = code.trim();
            if t.is_empty() {
                continue;
            }
            if in_require || in_replace || in_other_block {
                if t == ")" {
                    in_require = false;
                    in_replace = false;
                    in_other_block = false;
                    continue;
                }
                if in_require {
                    out.push(self.go_require(t, comment, n)?);
                } else if in_replace {
                    replaces.push(self.go_replace(t, n)?);
                }
                continue;
            }
            let mut words = t.splitn(2, char::is_whitespace);
            let verb = words.next().unwrap_or("");
            let rest = words.next().unwrap_or("").trim();
            match verb {
                "require" if rest == "(" => in_require = true,
                "require" => out.push(self.go_require(rest, comment, n)?),
                "replace" if rest == "(" => in_replace = true,
                "replace" => replaces.push(self.go_replace(rest, n)?),
                "module" | "go" | "toolchain" | "exclude" | "retract" | "godebug" | "tool"
                | "ignore" => {
                    if rest == "(" {
                        in_other_block = true;
                    }
                }
                _ => return Err(self.err(n, format!("unknown go.mod directive `{verb}`"))),
            }
        }
        // `replace old [v] => new v`: the audited module becomes the replacement.
        for p in &mut out {
            for (old, old_v, new, new_v) in &replaces {
                if *old == p.name && old_v.as_ref().is_none_or(|v| *v == p.version) {
                    if new_v.is_empty() {
                        // Local directory replacement: nothing to audit under that name.
                        p.version.clear();
                    } else {
                        p.name = new.clone();
                        p.version = new_v.clone();
                    }
                }
            }
        }
        out.retain(|p| !p.version.is_empty());
        Ok(out)
    }

    fn go_require(&self, spec: &str, comment: &str, n: u32) -> Result<Package, DepsError> {
        let mut it = spec.split_whitespace();
        let (Some(module), Some(version), None) = (it.next(), it.next(), it.next()) else {
            return Err(self.err(n, format!("expected `module version`, found `{spec}`")));
        };
        let module = unquote(module);
        if !version.starts_with('v') {
            return Err(self.err(
                n,
                format!("version `{version}` of {module} does not start with `v`"),
            ));
        }
        let mut pkg = self.pkg(Ecosystem::Go, module, version, n);
        pkg.direct = Some(!comment.trim().starts_with("indirect"));
        Ok(pkg)
    }

    fn go_replace(
        &self,
        spec: &str,
        n: u32,
    ) -> Result<(String, Option<String>, String, String), DepsError> {
        let Some((lhs, rhs)) = spec.split_once("=>") else {
            return Err(self.err(n, format!("replace without `=>`: `{spec}`")));
        };
        let l: Vec<&str> = lhs.split_whitespace().collect();
        let r: Vec<&str> = rhs.split_whitespace().collect();
        if l.is_empty() || l.len() > 2 || r.is_empty() || r.len() > 2 {
            return Err(self.err(n, format!("malformed replace `{spec}`")));
        }
        Ok((
            l[0].to_string(),
            l.get(1).map(|s| s.to_string()),
            r[0].to_string(),
            r.get(1).map(|s| s.to_string()).unwrap_or_default(),
        ))
    }

    fn go_sum(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let mut out = Vec::new();
        let mut seen = HashSet::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            let t = raw.trim();
            if t.is_empty() {
                continue;
            }
            let parts: Vec<&str> = t.split_whitespace().collect();
            if parts.len() != 3 || !parts[2].starts_with("h1:") {
                return Err(self.err(n, format!("expected `module version h1:hash`, found `{t}`")));
            }
            // `/go.mod`-only lines name modules whose go.mod was read, not built code.
            if parts[1].ends_with("/go.mod") {
                continue;
            }
            if seen.insert((parts[0], parts[1])) {
                out.push(self.pkg(Ecosystem::Go, parts[0], parts[1], n));
            }
        }
        Ok(out)
    }

    fn requirements(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let mut out = Vec::new();
        let lines: Vec<&str> = text.lines().collect();
        let mut i = 0;
        while i < lines.len() {
            let start = i as u32 + 1;
            let mut logical = String::new();
            // Joined continuation lines.
            loop {
                let l = lines[i];
                i += 1;
                if let Some(s) = l.trim_end().strip_suffix('\\') {
                    logical.push_str(s);
                    logical.push(' ');
                    if i < lines.len() {
                        continue;
                    }
                } else {
                    logical.push_str(l);
                }
                break;
            }
            let code = match logical
                .find(" #")
                .or(if logical.trim_start().starts_with('#') {
                    Some(0)
                } else {
                    None
                }) {
                Some(p) => &logical[..p],
                None => &logical[..],
            };
            let code = code.trim();
            if code.is_empty() || code.starts_with('-') {
                continue; // options: -r, -c, -e, --index-url, --hash continuation ...
            }
            if code.contains("://") || code.starts_with('.') || code.starts_with('/') {
                continue; // URLs and local paths
            }
            let spec = code.split(';').next().unwrap_or("").trim();
            let spec = spec.split(" --").next().unwrap_or("").trim();
            let name_end = spec
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '-' || c == '_' || c == '.'))
                .unwrap_or(spec.len());
            let name = &spec[..name_end];
            if name.is_empty() {
                return Err(self.err(start, format!("cannot read a requirement from `{code}`")));
            }
            let mut rest = spec[name_end..].trim();
            if rest.starts_with('[') {
                match rest.find(']') {
                    Some(p) => rest = rest[p + 1..].trim(),
                    None => return Err(self.err(start, format!("unclosed extras in `{spec}`"))),
                }
            }
            if rest.starts_with('@') {
                continue; // direct URL reference
            }
            let version =
                if let Some(v) = rest.strip_prefix("===").or_else(|| rest.strip_prefix("==")) {
                    let v = v.trim();
                    if v.contains(',') || v.contains('*') || v.is_empty() {
                        ""
                    } else {
                        v
                    }
                } else if rest.is_empty()
                    || ["<", ">", "~=", "!=", "("]
                        .iter()
                        .any(|p| rest.starts_with(p))
                {
                    ""
                } else {
                    return Err(self.err(
                        start,
                        format!("cannot read a version specifier from `{spec}`"),
                    ));
                };
            let mut pkg = self.pkg(Ecosystem::PyPI, name, version, start);
            pkg.direct = Some(true);
            out.push(pkg);
        }
        Ok(out)
    }

    fn gemfile_lock(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let mut out: Vec<Package> = Vec::new();
        let mut section = String::new();
        let mut in_specs = false;
        let mut direct: HashSet<String> = HashSet::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let indent = raw.len() - raw.trim_start().len();
            let t = raw.trim();
            if indent == 0 {
                section = t.to_string();
                in_specs = false;
                continue;
            }
            match section.as_str() {
                "GEM" | "GIT" | "PATH" | "PLUGIN SOURCE" => {
                    if indent == 2 {
                        in_specs = t == "specs:";
                        continue;
                    }
                    if !in_specs || indent != 4 || section == "PATH" {
                        continue;
                    }
                    let Some((name, rest)) = t.split_once(" (") else {
                        return Err(self.err(n, format!("expected `name (version)`, found `{t}`")));
                    };
                    let Some(version) = rest.strip_suffix(')') else {
                        return Err(self.err(n, format!("unclosed version in `{t}`")));
                    };
                    // `1.15.4-x86_64-linux`: the platform follows the first `-`.
                    let version = version.split('-').next().unwrap_or(version);
                    if !out.iter().any(|p| p.name == name && p.version == version) {
                        out.push(self.pkg(Ecosystem::RubyGems, name, version, n));
                    }
                }
                "DEPENDENCIES" => {
                    let name = t.split([' ', '!']).next().unwrap_or(t);
                    direct.insert(name.to_string());
                }
                _ => {}
            }
        }
        for p in &mut out {
            p.direct = Some(direct.contains(&p.name));
        }
        Ok(out)
    }

    fn package_resolved(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let v = self.json(text)?;
        let (pins, id_key) = match v.get("version").and_then(Value::as_u64) {
            Some(1) => (
                v.get("object")
                    .and_then(|o| o.get("pins"))
                    .and_then(Value::as_array),
                "package",
            ),
            Some(2 | 3) => (v.get("pins").and_then(Value::as_array), "identity"),
            other => {
                return Err(self.err(1, format!("unsupported Package.resolved version {other:?}")));
            }
        };
        let pins = pins.ok_or_else(|| self.err(1, "no `pins` array"))?;
        let lines: Vec<&str> = text.lines().collect();
        let mut cursor = 0usize;
        let mut out = Vec::new();
        for pin in pins {
            let ident = pin.get(id_key).and_then(Value::as_str).unwrap_or("");
            let url = pin
                .get("location")
                .or_else(|| pin.get("repositoryURL"))
                .and_then(Value::as_str)
                .unwrap_or("");
            let needle = format!("\"{id_key}\"");
            let mut line = 0;
            if let Some(off) = lines[cursor..].iter().position(|l| {
                l.trim_start().starts_with(&needle) && l.contains(&format!("\"{ident}\""))
            }) {
                cursor += off;
                line = cursor as u32 + 1;
            }
            if url.is_empty() {
                return Err(self.err(line, format!("pin `{ident}` has no repository URL")));
            }
            let Some(version) = pin
                .get("state")
                .and_then(|s| s.get("version"))
                .and_then(Value::as_str)
            else {
                continue; // branch/revision pins carry no version
            };
            let name = Ecosystem::SwiftURL.normalize_name(url);
            out.push(self.pkg(Ecosystem::SwiftURL, &name, version, line));
        }
        Ok(out)
    }

    fn podfile_lock(&self, text: &str) -> Result<Vec<Package>, DepsError> {
        let mut out: Vec<Package> = Vec::new();
        let mut section = String::new();
        let mut direct: HashSet<String> = HashSet::new();
        for (i, raw) in text.lines().enumerate() {
            let n = i as u32 + 1;
            if raw.trim().is_empty() {
                continue;
            }
            let indent = raw.len() - raw.trim_start().len();
            let t = raw.trim();
            if indent == 0 {
                section = t.trim_end_matches(':').to_string();
                continue;
            }
            if indent != 2 {
                continue;
            }
            let Some(item) = t.strip_prefix("- ") else {
                continue;
            };
            let item = unquote(item.trim_end_matches(':'));
            match section.as_str() {
                "PODS" => {
                    let Some((name, rest)) = item.split_once(" (") else {
                        return Err(
                            self.err(n, format!("expected `Pod (version)`, found `{item}`"))
                        );
                    };
                    let Some(version) = rest.strip_suffix(')') else {
                        return Err(self.err(n, format!("unclosed version in `{item}`")));
                    };
                    let root = name.split('/').next().unwrap_or(name);
                    if !out.iter().any(|p| p.name == root && p.version == version) {
                        out.push(self.pkg(Ecosystem::CocoaPods, root, version, n));
                    }
                }
                "DEPENDENCIES" => {
                    let name = item.split(" (").next().unwrap_or(item);
                    direct.insert(name.split('/').next().unwrap_or(name).to_string());
                }
                _ => {}
            }
        }
        if !text.lines().any(|l| l.trim_end() == "PODS:") {
            return Err(self.err(1, "no `PODS:` section"));
        }
        for p in &mut out {
            p.direct = Some(direct.contains(&p.name));
        }
        Ok(out)
    }
}

#[derive(Default)]
struct TomlPkg {
    header: u32,
    name: String,
    line: u32,
    version: String,
    source: Option<String>,
    arrays: HashMap<String, Vec<String>>,
}

/// `pnpm-lock.yaml` package keys: v5 `/name/1.0.0_peer`, `/@scope/name/1.0.0`; v6
/// `/name@1.0.0(peer)`; v9 `name@1.0.0(peer)`.
fn split_pnpm_key(key: &str) -> Option<(String, String)> {
    let k = key.strip_prefix('/').unwrap_or(key);
    let k = k.split('(').next().unwrap_or(k);
    let scope_len = if k.starts_with('@') {
        k.find('/')? + 1
    } else {
        0
    };
    let rest = &k[scope_len..];
    let sep = rest.find(['/', '@'])?;
    let name = &k[..scope_len + sep];
    let version = &rest[sep + 1..];
    // v5 (`name/version`): the version may carry `_peer@x` suffixes
    let version = if rest.as_bytes()[sep] == b'/' {
        version.split('_').next().unwrap_or(version)
    } else {
        version
    };
    if name.is_empty() || version.is_empty() {
        return None;
    }
    Some((name.to_string(), version.to_string()))
}
