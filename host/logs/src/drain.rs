//! The parse tree of Drain (He et al., ICWS 2017): records are routed by
//! severity and token count, then by their first tokens (a fixed depth),
//! to a leaf holding a few templates; the most similar template at or above
//! the threshold takes the record (and turns the positions where they differ
//! into variables), or the record starts a new template.

use std::collections::HashMap;

use crate::severity::Severity;
use crate::token::Tok;

/// The parameters of the tree.
#[derive(Debug, Clone, Copy)]
pub struct DrainConfig {
    /// Token levels below the length level (drain3 counts depth 4 for one).
    pub prefix_depth: usize,
    /// The least similarity (equal positions / tokens) to join a template.
    pub similarity: f64,
    /// Children of a node before further tokens go to its wildcard child.
    pub max_children: usize,
    /// Templates kept; once reached, a record that matches none is left
    /// unclassified (counted) rather than growing memory.
    pub max_templates: usize,
}

impl Default for DrainConfig {
    fn default() -> Self {
        DrainConfig {
            prefix_depth: 1,
            similarity: 0.5,
            max_children: 100,
            max_templates: 20_000,
        }
    }
}

/// One position of a template.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Slot {
    Lit(Box<str>),
    Key(Box<str>),
    Any,
}

/// A template: its id (1-based), severity and slots.
#[derive(Debug, Clone)]
pub struct Template {
    pub id: u32,
    pub severity: Severity,
    slots: Vec<Slot>,
}

impl Template {
    /// The template as text, variables shown `<*>`.
    pub fn text(&self) -> String {
        let mut s = String::new();
        for (i, slot) in self.slots.iter().enumerate() {
            if i > 0 {
                s.push(' ');
            }
            match slot {
                Slot::Lit(w) => s.push_str(w),
                Slot::Key(k) => {
                    s.push_str(k);
                    s.push_str("<*>");
                }
                Slot::Any => s.push_str("<*>"),
            }
        }
        s
    }

    /// Similarity to `toks` (same length): equal positions over all, a
    /// masked variable under a template variable counting as equal; and
    /// how many template variables it had.
    fn similarity(&self, toks: &[Tok<'_>]) -> (f64, usize) {
        if toks.is_empty() {
            return (1.0, 0);
        }
        let mut equal = 0usize;
        let mut params = 0usize;
        for (slot, tok) in self.slots.iter().zip(toks) {
            match (slot, tok) {
                (Slot::Lit(l), Tok::Word(w)) if **l == **w => equal += 1,
                (Slot::Key(l), Tok::Key(k)) if **l == **k => equal += 1,
                (Slot::Any, Tok::Var) => equal += 1,
                (Slot::Any, _) => params += 1,
                _ => {}
            }
        }
        (equal as f64 / toks.len() as f64, params)
    }

    fn absorb(&mut self, toks: &[Tok<'_>]) {
        for (slot, tok) in self.slots.iter_mut().zip(toks) {
            let same = match (&*slot, tok) {
                (Slot::Lit(l), Tok::Word(w)) => **l == **w,
                (Slot::Key(l), Tok::Key(k)) => **l == **k,
                (Slot::Any, _) => true,
                _ => false,
            };
            if !same {
                *slot = Slot::Any;
            }
        }
    }
}

#[derive(Debug, Default)]
struct Node {
    children: HashMap<Box<str>, Node>,
    wildcard: Option<Box<Node>>,
    templates: Vec<u32>,
}

/// The key of a token in the tree (`None`: the wildcard branch).
fn key<'a>(t: &Tok<'a>) -> Option<&'a str> {
    match t {
        Tok::Word(w) => Some(w),
        Tok::Key(k) => Some(k),
        Tok::Var => None,
    }
}

/// The tree and the templates it found.
#[derive(Debug, Default)]
pub struct Drain {
    config: DrainConfig,
    roots: HashMap<(Severity, usize), Node>,
    templates: Vec<Template>,
}

impl Drain {
    pub fn new(config: DrainConfig) -> Self {
        Drain {
            config,
            roots: HashMap::new(),
            templates: Vec::new(),
        }
    }

    /// The template of a record's tokens: an existing one (updated) or a new
    /// one; `None` when it matches none and the template limit is reached.
    pub fn add(&mut self, severity: Severity, toks: &[Tok<'_>]) -> Option<u32> {
        let depth = self.config.prefix_depth.min(toks.len());
        // Find the leaf.
        let mut node = self.roots.get(&(severity, toks.len()));
        for t in &toks[..depth] {
            let Some(n) = node else { break };
            node = match key(t) {
                Some(k) => n.children.get(k).or(n.wildcard.as_deref()),
                None => n.wildcard.as_deref(),
            };
        }
        if let Some(leaf) = node {
            let mut best: Option<(u32, f64, usize)> = None;
            for &id in &leaf.templates {
                let (sim, params) = self.templates[id as usize - 1].similarity(toks);
                if best.is_none_or(|(_, s, p)| sim > s || (sim == s && params > p)) {
                    best = Some((id, sim, params));
                }
            }
            if let Some((id, sim, _)) = best
                && sim >= self.config.similarity
            {
                self.templates[id as usize - 1].absorb(toks);
                return Some(id);
            }
        }
        if self.templates.len() >= self.config.max_templates {
            return None;
        }
        let id = self.templates.len() as u32 + 1;
        self.templates.push(Template {
            id,
            severity,
            slots: toks
                .iter()
                .map(|t| match t {
                    Tok::Word(w) => Slot::Lit((*w).into()),
                    Tok::Key(k) => Slot::Key((*k).into()),
                    Tok::Var => Slot::Any,
                })
                .collect(),
        });
        // Insert along the path, creating nodes.
        let max_children = self.config.max_children;
        let mut node = self.roots.entry((severity, toks.len())).or_default();
        for t in &toks[..depth] {
            node = match key(t) {
                Some(k) if node.children.contains_key(k) => {
                    node.children.get_mut(k).expect("present")
                }
                Some(k) if node.children.len() < max_children => {
                    node.children.entry(k.into()).or_default()
                }
                _ => node.wildcard.get_or_insert_with(Default::default),
            };
        }
        node.templates.push(id);
        Some(id)
    }

    pub fn template(&self, id: u32) -> &Template {
        &self.templates[id as usize - 1]
    }

    pub fn templates(&self) -> &[Template] {
        &self.templates
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::token::tokenize;

    fn mine(lines: &[&str]) -> (Vec<u32>, Drain) {
        let mut d = Drain::new(DrainConfig::default());
        let mut toks = Vec::new();
        let ids = lines
            .iter()
            .map(|l| {
                tokenize(l, &mut toks);
                d.add(Severity::Info, &toks).expect("room")
            })
            .collect();
        (ids, d)
    }

    #[test]
    fn variable_words_merge_and_distinct_events_do_not() {
        let (ids, d) = mine(&[
            "user alice logged in from 10.0.0.1",
            "user bob logged in from 10.0.0.2",
            "disk almost full on /dev/sda1",
            "user carol logged in from 10.0.0.3",
            "cache miss for key",
        ]);
        assert_eq!(ids, vec![1, 1, 2, 1, 3]);
        assert_eq!(d.template(1).text(), "user <*> logged in from <*>");
        assert_eq!(d.template(2).text(), "disk almost full on <*>");
    }

    #[test]
    fn the_template_limit_leaves_new_records_unclassified() {
        let mut d = Drain::new(DrainConfig {
            max_templates: 1,
            ..DrainConfig::default()
        });
        let mut toks = Vec::new();
        tokenize("a b c", &mut toks);
        assert_eq!(d.add(Severity::Info, &toks), Some(1));
        tokenize("x y", &mut toks);
        assert_eq!(d.add(Severity::Info, &toks), None);
    }
}
