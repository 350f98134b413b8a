//! Branches: `if` (Go's initializer, PHP's and Ruby's `body`, Ruby's
//! `unless`) and conditional expressions. A constant condition walks one
//! side; otherwise both, weakly, with the guards of `guard.rs` applied: the
//! guarded branch sees the tested variables clean, and past a negated
//! guard whose branch leaves or resets them they are clean too.

use agent_syntax::tree_sitter::Node;

use super::analyze::{Analyzer, Frame};
use super::consts::literal_key;
use super::guard::{ALL, cleaned};
use super::lang::{Role, squash};
use super::value::{T, union};

impl<'t> Analyzer<'_, 't> {
    /// Whether `block` assigns a constant to `var` (`next = "/"`).
    fn resets(&self, block: Node<'t>, var: &str) -> bool {
        let mut nodes = super::analyze::descendants(block);
        nodes.push(block);
        nodes.into_iter().any(|d| {
            let Role::Assign(l, r) = self.lang.role(d.kind()) else {
                return false;
            };
            let lhs = d.child_by_field_name(l);
            let rhs = if r.is_empty() {
                d.named_child(0)
            } else {
                d.child_by_field_name(r)
            };
            lhs.is_some_and(|l| squash(l, self.src) == var)
                && rhs.is_some_and(|r| literal_key(r, self.src).is_some())
        })
    }

    pub(super) fn if_(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        // Go's `if x, err := f(); err != nil`: the statement runs first.
        if let Some(init) = n.child_by_field_name("initializer") {
            self.eval(fr, init);
        }
        let cond = n.child_by_field_name("condition");
        if let Some(c) = cond {
            self.eval(fr, c);
        }
        // PHP and Ruby modifiers name the branch `body`.
        let cons = n
            .child_by_field_name("consequence")
            .or_else(|| n.child_by_field_name("body"));
        let mut cursor = n.walk();
        let alts: Vec<Node<'t>> = n
            .children_by_field_name("alternative", &mut cursor)
            .collect();
        let known = cond.and_then(|c| self.const_cond(fr, c));
        // Ruby `unless`: the branch runs when the test fails.
        let unless = n.kind().starts_with("unless");
        let known = known.map(|k| k != unless);
        let guard = cond.and_then(|c| self.guard(fr, c)).map(|mut g| {
            g.negated ^= unless;
            g
        });
        match known {
            Some(true) => {
                if let Some(c) = cons {
                    self.eval(fr, c);
                }
            }
            Some(false) => {
                for a in alts {
                    self.eval(fr, a);
                }
            }
            None => {
                let before: Vec<(String, u16, Option<T>)> = guard
                    .iter()
                    .flat_map(|g| g.vars.iter())
                    .map(|(v, m)| (v.clone(), *m, fr.vars.get(v).cloned()))
                    .collect();
                fr.weak += 1;
                if let Some(c) = cons {
                    let positive = guard.as_ref().is_some_and(|g| !g.negated);
                    if positive {
                        for (v, m, old) in &before {
                            if *m == ALL || old.is_some() {
                                let t = cleaned(old.clone().flatten(), *m);
                                fr.vars.insert(v.clone(), t);
                            }
                        }
                    }
                    self.eval(fr, c);
                    if positive {
                        for (v, m, old) in &before {
                            if *m == ALL || old.is_some() {
                                let now = fr.vars.remove(v).flatten();
                                fr.vars.insert(v.clone(), union(now, old.clone().flatten()));
                            }
                        }
                    }
                }
                for a in alts {
                    self.eval(fr, a);
                }
                fr.weak -= 1;
                // `if (!ok(x)) { return; }` / `if (!ok(x)) { x = "/"; }`:
                // past the branch, `x` passed the test.
                if let (Some(g), Some(c)) = (&guard, cons)
                    && g.negated
                {
                    let leaves = self.exits(c);
                    for (v, m, old) in &before {
                        if (leaves || self.resets(c, v)) && (*m == ALL || old.is_some()) {
                            fr.vars
                                .insert(v.clone(), cleaned(old.clone().flatten(), *m));
                        }
                    }
                }
            }
        }
        None
    }

    pub(super) fn ternary(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        let python = self.lang.name == "python";
        let cond = n.child_by_field_name("condition");
        let cons = n
            .child_by_field_name("consequence")
            .or_else(|| n.child_by_field_name("body"))
            .or_else(|| n.named_child(0).filter(|_| python));
        let alt = n
            .child_by_field_name("alternative")
            .or_else(|| n.named_child(2).filter(|_| python));
        let cond = cond.or_else(|| n.named_child(1).filter(|_| python));
        if let Some(c) = cond {
            self.eval(fr, c);
        }
        // `allowed(x) ? x : "default"`: the guarded branch sees `x` clean.
        let guard = cond.and_then(|c| self.guard(fr, c));
        let guarded = |this: &mut Self, fr: &mut Frame, branch: Option<Node<'t>>, neg: bool| {
            let mut saved = Vec::new();
            if let Some(g) = guard.as_ref().filter(|g| g.negated == neg) {
                for (v, m) in &g.vars {
                    let old = fr.vars.get(v).cloned();
                    if *m == ALL || old.is_some() {
                        fr.vars
                            .insert(v.clone(), cleaned(old.clone().flatten(), *m));
                        saved.push((v.clone(), old));
                    }
                }
            }
            let t = branch.and_then(|b| this.eval(fr, b));
            for (v, old) in saved {
                match old {
                    Some(old) => fr.vars.insert(v, old),
                    None => fr.vars.remove(&v),
                };
            }
            t
        };
        match cond.and_then(|c| self.const_cond(fr, c)) {
            Some(true) => cons.and_then(|c| self.eval(fr, c)),
            Some(false) => alt.and_then(|a| self.eval(fr, a)),
            None => {
                let a = guarded(self, fr, cons, false);
                let b = guarded(self, fr, alt, true);
                union(a, b)
            }
        }
    }
}
