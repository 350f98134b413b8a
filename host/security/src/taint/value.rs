//! Taint values: where the data came from (the flow so far), which
//! categories a sanitizer cleaned it for, and whether it derives from a
//! real source or from parameters of the function being summarised.

use std::rc::Rc;

use super::category::Category;

/// Longest flow kept: the first steps and the latest ones.
const MAX_STEPS: usize = 16;

/// One step of a flow.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// 1-based line.
    pub line: u32,
    /// What happens there (`source: request.args`, `assigned to q`).
    pub note: String,
}

/// A tainted value.
#[derive(Debug, Clone)]
pub struct Taint {
    /// From the source (or parameter) to here.
    pub flow: Rc<Vec<Step>>,
    /// Category bits sanitizers cleaned.
    pub cleared: u16,
    /// Derives from a real source.
    pub src: bool,
    /// Derives from these parameters of the function being summarised.
    pub params: u64,
    /// The value is the result of a call the spec does not know (a parsed
    /// document, another module's object, a process result), not text
    /// built from the input: a route returning it is not returning HTML
    /// made of tainted text. Concatenation, formatting, f-strings and
    /// indexing make it text again.
    pub opaque: bool,
    /// Derives only from local sources (the spec's `sources.local`: the
    /// command line, the environment, standard input): the input of the
    /// user who runs the program, not of a remote one.
    pub local: bool,
}

/// A value: tainted or not.
pub type T = Option<Taint>;

impl Taint {
    /// A value straight from a source (`local`: one of the spec's local
    /// sources).
    pub fn source(line: u32, note: String, local: bool) -> Taint {
        Taint {
            flow: Rc::new(vec![Step { line, note }]),
            cleared: 0,
            src: true,
            params: 0,
            opaque: false,
            local,
        }
    }

    /// Whether reaching a sink of `c` is a finding: the value derives from
    /// a source, is not cleaned for `c`, and is not a path the local user
    /// chose (opening the file named on the command line or in the
    /// environment is what such a program is for; the user could open it
    /// anyway).
    pub fn reports(&self, c: Category) -> bool {
        self.src && self.hits(c) && !(self.local && c == Category::Path)
    }

    /// Whether it is dangerous for `c`.
    pub fn hits(&self, c: Category) -> bool {
        self.cleared & c.bit() == 0
    }

    /// The same value, one step further.
    pub fn step(&self, line: u32, note: String) -> Taint {
        let mut flow = (*self.flow).clone();
        if flow.last().is_some_and(|s| s.line == line) {
            if flow.len() == 1 {
                // The source's own line: its note says more.
                return self.clone();
            }
            flow.pop();
        }
        if flow.len() >= MAX_STEPS {
            flow.remove(MAX_STEPS / 2);
        }
        flow.push(Step { line, note });
        Taint {
            flow: Rc::new(flow),
            ..self.clone()
        }
    }

    /// This value's flow followed by `more` (a callee's internal steps).
    pub fn then(&self, more: &[Step]) -> Vec<Step> {
        let mut flow = (*self.flow).clone();
        flow.extend(more.iter().cloned());
        if flow.len() > MAX_STEPS {
            let cut = flow.len() - MAX_STEPS;
            flow.drain(MAX_STEPS / 2..MAX_STEPS / 2 + cut);
        }
        flow
    }
}

/// The value of a merge point: tainted when either side is; cleaned only
/// for what both sides were cleaned for (a source's side decides when
/// only one side derives from a source); text when either side is.
pub fn union(a: T, b: T) -> T {
    match (a, b) {
        (None, x) | (x, None) => x,
        (Some(a), Some(b)) => {
            // What a source's value was cleaned for stays cleaned when it
            // meets a parameter's (`request.getContextPath() + next`): the
            // findings are about the source.
            let cleared = match (a.src, b.src) {
                (true, false) => a.cleared,
                (false, true) => b.cleared,
                _ => a.cleared & b.cleared,
            };
            // Local only when every source side is local.
            let local = match (a.src, b.src) {
                (true, true) => a.local && b.local,
                (true, false) => a.local,
                (false, true) => b.local,
                (false, false) => false,
            };
            let (cleared, src, params, opaque) = (
                cleared,
                a.src || b.src,
                a.params | b.params,
                a.opaque && b.opaque,
            );
            let base = if a.src || !b.src { a } else { b };
            Some(Taint {
                cleared,
                src,
                params,
                opaque,
                local,
                ..base
            })
        }
    }
}

/// The same value as text (built by concatenation, formatting, indexing).
pub fn text(t: T) -> T {
    t.map(|mut t| {
        t.opaque = false;
        t
    })
}
