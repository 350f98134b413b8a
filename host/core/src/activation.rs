//! Skill activation: which loaded skills take part in a run, and in which
//! order.
//!
//! A skill is active when
//! - it is named with `--skills` (explicit activation always wins), or
//! - it declares no trigger at all (built-in tool skills such as
//!   `core-tools`), or
//! - its `triggers` match: `modes`, when not empty, restricts the skill to
//!   those modes (a skill whose only trigger is `modes` is active in them);
//!   otherwise a file pattern matching a project file, a keyword found in
//!   the user's message (case-insensitive) or a detected language activates
//!   it.
//!
//! Active skills pull in their dependencies. A required dependency must be
//! loaded with a version matching the requirement, else the dependent is not
//! activated and a problem says what to install; an optional one that is
//! missing or does not match is skipped with a note. Every skill on a
//! dependency cycle is left out. [`Activation::order`] lists dependencies
//! before their dependents, ties broken by skill name, so the same input
//! always gives the same output.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::Path;

use agent_manifest::{Manifest, Mode};
use agent_runtime::Skill;
use globset::{GlobBuilder, GlobMatcher};

/// The most project entries (files and directories) walked for file
/// triggers; a larger tree is matched on its first entries only.
pub const MAX_TRIGGER_FILES: usize = 20_000;

/// What triggers are evaluated against.
#[derive(Debug, Clone, Copy)]
pub struct TriggerInput<'a> {
    /// The project root; file patterns are matched against its files
    /// (relative, `/`-separated), walked once, respecting `.gitignore`, at
    /// most [`MAX_TRIGGER_FILES`] entries.
    pub project_root: &'a Path,
    /// Detected project languages.
    pub languages: &'a [String],
    /// The user's latest message.
    pub user_message: &'a str,
    /// The mode of the run.
    pub mode: Mode,
    /// Skill names given with `--skills`.
    pub explicit: &'a [String],
}

/// The outcome of [`activate`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Activation {
    /// Indices into the skills slice of the active skills, dependencies
    /// before dependents, ties by skill name.
    pub order: Vec<usize>,
    /// `(skill, why)` for every active skill, in [`Activation::order`]; a
    /// skill that skipped an optional dependency has a second entry saying
    /// so.
    pub reasons: Vec<(String, String)>,
    /// `(skill, why not)` for every skill that was triggered (or needed by
    /// one) but could not be activated, and for `--skills` names that are
    /// not loaded. Sorted by skill name.
    pub problems: Vec<(String, String)>,
}

impl Activation {
    /// Whether the skill called `name` is active, given the slice passed to
    /// [`activate`].
    pub fn is_active(&self, skills: &[Skill], name: &str) -> bool {
        self.order.iter().any(|&i| skills[i].name() == name)
    }

    /// The names of the active skills, in order, given the slice passed to
    /// [`activate`].
    pub fn names<'s>(&self, skills: &'s [Skill]) -> Vec<&'s str> {
        self.order.iter().map(|&i| skills[i].name()).collect()
    }
}

/// Decides which of `skills` are active for `input` and orders them.
pub fn activate(skills: &[Skill], input: &TriggerInput<'_>) -> Activation {
    let manifests: Vec<&Manifest> = skills.iter().map(|s| &s.manifest).collect();
    activate_manifests(&manifests, input)
}

/// [`activate`] over bare manifests (indices into `manifests`).
pub fn activate_manifests(manifests: &[&Manifest], input: &TriggerInput<'_>) -> Activation {
    let mut files = ProjectFiles::new(input.project_root);
    let mut problems: BTreeSet<(String, String)> = BTreeSet::new();

    // The first skill of each name answers for it.
    let mut by_name: HashMap<&str, usize> = HashMap::new();
    for (i, m) in manifests.iter().enumerate() {
        by_name.entry(m.name.as_str()).or_insert(i);
    }
    for name in input.explicit {
        if !by_name.contains_key(name.as_str()) {
            problems.insert((
                name.clone(),
                "requested with --skills but not installed or not loaded".to_string(),
            ));
        }
    }

    let mut triggered: BTreeMap<(String, usize), String> = BTreeMap::new();
    for (i, m) in manifests.iter().enumerate() {
        if by_name.get(m.name.as_str()) != Some(&i) {
            continue;
        }
        if let Some(why) = trigger_reason(m, input, &mut files) {
            triggered.insert((m.name.clone(), i), why);
        }
    }

    let mut graph = Graph::new(manifests, &by_name);
    for &(_, i) in triggered.keys() {
        graph.visit(i);
    }
    for (i, msg) in &graph.failed {
        problems.insert((manifests[*i].name.clone(), msg.clone()));
    }

    // Active set: triggered skills that are viable, plus their dependencies.
    let mut reason: HashMap<usize, String> = HashMap::new();
    let mut notes: HashMap<usize, Vec<String>> = HashMap::new();
    let mut queue: Vec<usize> = Vec::new();
    for ((_, i), why) in &triggered {
        if !graph.failed.contains_key(i) {
            reason.insert(*i, why.clone());
            queue.push(*i);
        }
    }
    let mut head = 0;
    while head < queue.len() {
        let i = queue[head];
        head += 1;
        let m = manifests[i];
        for dep in &m.dependencies {
            match graph.resolve(i, dep) {
                Ok(d) => {
                    if let std::collections::hash_map::Entry::Vacant(e) = reason.entry(d) {
                        let kind = if dep.optional {
                            "optional dependency of"
                        } else {
                            "required by"
                        };
                        e.insert(format!("{kind} `{}`", m.name));
                        queue.push(d);
                    }
                }
                Err(why) => notes
                    .entry(i)
                    .or_default()
                    .push(format!("optional dependency `{}` skipped: {why}", dep.name)),
            }
        }
    }

    let order = graph.order(reason.keys().copied().collect());
    let mut reasons = Vec::new();
    for &i in &order {
        let name = &manifests[i].name;
        reasons.push((name.clone(), reason[&i].clone()));
        for note in notes.get(&i).into_iter().flatten() {
            reasons.push((name.clone(), note.clone()));
        }
    }
    Activation {
        order,
        reasons,
        problems: problems.into_iter().collect(),
    }
}

/// Why `m` activates on its own, if it does.
fn trigger_reason(
    m: &Manifest,
    input: &TriggerInput<'_>,
    files: &mut ProjectFiles,
) -> Option<String> {
    if input.explicit.contains(&m.name) {
        return Some("explicit (--skills)".to_string());
    }
    let t = &m.triggers;
    if t.is_empty() {
        return Some("always active (no triggers)".to_string());
    }
    if !t.modes.is_empty() && !t.modes.contains(&input.mode) {
        return None;
    }
    if t.files.is_empty() && t.keywords.is_empty() && t.languages.is_empty() {
        return Some(format!("mode `{}`", input.mode));
    }
    for pattern in &t.files {
        if let Some(path) = files.first_match(pattern) {
            return Some(format!("file pattern `{pattern}` matched `{path}`"));
        }
    }
    let message = input.user_message.to_lowercase();
    for keyword in &t.keywords {
        let k = keyword.trim().to_lowercase();
        if !k.is_empty() && message.contains(&k) {
            return Some(format!("keyword `{keyword}` in the message"));
        }
    }
    for language in &t.languages {
        if input
            .languages
            .iter()
            .any(|l| l.eq_ignore_ascii_case(language))
        {
            return Some(format!("language `{language}` detected"));
        }
    }
    None
}

/// The project's entries, walked on first use.
struct ProjectFiles<'a> {
    root: &'a Path,
    /// `(relative path, is a directory)`, sorted.
    entries: Option<Vec<(String, bool)>>,
}

impl<'a> ProjectFiles<'a> {
    fn new(root: &'a Path) -> Self {
        Self {
            root,
            entries: None,
        }
    }

    fn entries(&mut self) -> &[(String, bool)] {
        let root = self.root;
        self.entries.get_or_insert_with(|| walk(root))
    }

    /// The first entry `pattern` matches. A pattern without `/` matches an
    /// entry's name at any depth; one with `/` matches the relative path
    /// (a leading `/` anchors it at the root anyway); a trailing `/`
    /// matches directories only.
    fn first_match(&mut self, pattern: &str) -> Option<String> {
        let dir_only = pattern.ends_with('/');
        let body = pattern.trim_end_matches('/');
        let anchored = body.contains('/');
        let body = body.trim_start_matches('/');
        if body.is_empty() {
            return None;
        }
        let matcher: GlobMatcher = GlobBuilder::new(body)
            .literal_separator(true)
            .build()
            .ok()?
            .compile_matcher();
        self.entries()
            .iter()
            .find(|(path, is_dir)| {
                if dir_only && !is_dir {
                    return false;
                }
                if anchored {
                    matcher.is_match(path)
                } else {
                    let name = path.rsplit('/').next().unwrap_or(path);
                    matcher.is_match(name)
                }
            })
            .map(|(p, is_dir)| if *is_dir { format!("{p}/") } else { p.clone() })
    }
}

/// Walks `root` (respecting `.gitignore`, `.ignore` and git excludes even
/// outside a git repository, skipping `.git`), at most [`MAX_TRIGGER_FILES`]
/// entries, in a deterministic order.
fn walk(root: &Path) -> Vec<(String, bool)> {
    let mut out = Vec::new();
    let walker = ignore::WalkBuilder::new(root)
        .hidden(false)
        .require_git(false)
        .follow_links(false)
        .sort_by_file_name(|a, b| a.cmp(b))
        .filter_entry(|e| e.file_name() != ".git")
        .build();
    for entry in walker.flatten() {
        if entry.depth() == 0 {
            continue;
        }
        let Ok(rel) = entry.path().strip_prefix(root) else {
            continue;
        };
        let rel: Vec<String> = rel
            .components()
            .map(|c| c.as_os_str().to_string_lossy().into_owned())
            .collect();
        let is_dir = entry.file_type().is_some_and(|t| t.is_dir());
        out.push((rel.join("/"), is_dir));
        if out.len() >= MAX_TRIGGER_FILES {
            break;
        }
    }
    out.sort();
    out
}

/// The dependency graph of the skills reachable from the triggered ones.
struct Graph<'m> {
    manifests: &'m [&'m Manifest],
    by_name: &'m HashMap<&'m str, usize>,
    /// 1: on the DFS stack, 2: done.
    state: HashMap<usize, u8>,
    stack: Vec<usize>,
    /// Skills that cannot be activated, with why.
    failed: BTreeMap<usize, String>,
}

impl<'m> Graph<'m> {
    fn new(manifests: &'m [&'m Manifest], by_name: &'m HashMap<&'m str, usize>) -> Self {
        Self {
            manifests,
            by_name,
            state: HashMap::new(),
            stack: Vec::new(),
            failed: BTreeMap::new(),
        }
    }

    /// The loaded skill satisfying `dep` of skill `from`, or why there is
    /// none (missing or a version not matching).
    fn find(&self, from: usize, dep: &agent_manifest::Dependency) -> Result<usize, String> {
        let m = self.manifests[from];
        let Some(&d) = self.by_name.get(dep.name.as_str()) else {
            return Err(format!(
                "`{}` needs `{}` {}, which is not installed (install it with `agent skill install {}`)",
                m.name, dep.name, dep.version, dep.name
            ));
        };
        let found = &self.manifests[d].version;
        if !dep.version.matches(found) {
            return Err(format!(
                "`{}` needs `{}` {} but {found} is loaded",
                m.name, dep.name, dep.version
            ));
        }
        Ok(d)
    }

    /// [`Graph::find`], and the dependency must itself be activatable.
    fn resolve(&self, from: usize, dep: &agent_manifest::Dependency) -> Result<usize, String> {
        let d = self.find(from, dep)?;
        match self.failed.get(&d) {
            Some(why) => Err(format!("`{}` cannot be activated: {why}", dep.name)),
            None => Ok(d),
        }
    }

    /// Depth-first visit of `i` and its dependencies, recording failures.
    fn visit(&mut self, i: usize) {
        match self.state.get(&i) {
            Some(2) => return,
            Some(_) => {
                // On the stack: a cycle from i's position to the top.
                let start = self.stack.iter().position(|&s| s == i).unwrap_or(0);
                let members: Vec<usize> = self.stack[start..].to_vec();
                let mut names: Vec<&str> = members
                    .iter()
                    .map(|&s| self.manifests[s].name.as_str())
                    .collect();
                names.push(self.manifests[i].name.as_str());
                let cycle = format!("dependency cycle {}", names.join(" -> "));
                for s in members {
                    self.failed.entry(s).or_insert_with(|| cycle.clone());
                }
                return;
            }
            None => {}
        }
        self.state.insert(i, 1);
        self.stack.push(i);
        let m = self.manifests[i];
        let mut deps: Vec<&agent_manifest::Dependency> = m.dependencies.iter().collect();
        deps.sort_by(|a, b| a.name.cmp(&b.name));
        for dep in &deps {
            if let Ok(d) = self.find(i, dep) {
                self.visit(d);
            }
        }
        self.stack.pop();
        self.state.insert(i, 2);
        if self.failed.contains_key(&i) {
            return;
        }
        for dep in deps {
            if dep.optional {
                continue;
            }
            if let Err(why) = self.resolve(i, dep) {
                self.failed.insert(i, why);
                return;
            }
        }
    }

    /// `active` ordered: dependencies first, ties by name (Kahn's algorithm).
    fn order(&self, active: BTreeSet<usize>) -> Vec<usize> {
        let mut pending: HashMap<usize, usize> = HashMap::new();
        let mut dependents: HashMap<usize, Vec<usize>> = HashMap::new();
        for &i in &active {
            let mut deps: BTreeSet<usize> = BTreeSet::new();
            for dep in &self.manifests[i].dependencies {
                if let Ok(d) = self.resolve(i, dep)
                    && active.contains(&d)
                {
                    deps.insert(d);
                }
            }
            pending.insert(i, deps.len());
            for d in deps {
                dependents.entry(d).or_default().push(i);
            }
        }
        let key = |i: usize| (self.manifests[i].name.clone(), i);
        let mut ready: BTreeSet<(String, usize)> = active
            .iter()
            .filter(|i| pending[i] == 0)
            .map(|&i| key(i))
            .collect();
        let mut out = Vec::with_capacity(active.len());
        while let Some(next) = ready.pop_first() {
            let i = next.1;
            out.push(i);
            for &j in dependents.get(&i).into_iter().flatten() {
                if let Some(n) = pending.get_mut(&j) {
                    *n -= 1;
                    if *n == 0 {
                        ready.insert(key(j));
                    }
                }
            }
        }
        out
    }
}

#[cfg(test)]
mod tests;
