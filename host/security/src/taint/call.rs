//! Calls: sources, sinks, sanitizers, propagators into the receiver, maps
//! with constant keys, lists with constant indexes, summaries of the
//! file's own functions, and otherwise the union of receiver and
//! arguments.

use agent_syntax::tree_sitter::Node;

use super::analyze::{Analyzer, Frame, ParamSink, line_of, matches};
use super::lang::{Role, call_parts, squash};
use super::value::{T, Taint, text, union};

impl<'t> Analyzer<'_, 't> {
    pub(super) fn call(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        let parts = call_parts(self.lang, n, self.src);
        let mut callee = parts.callee.clone();
        let recv_key = parts.receiver.map(|r| squash(r, self.src));
        if let Some(alias) = recv_key.as_ref().and_then(|k| fr.aliases.get(k)) {
            callee = format!("{alias}.{}", parts.name);
        }
        if matches(&self.spec.source_calls, &callee)
            || (parts.args.is_empty() && matches(&self.spec.source_exprs, &callee))
        {
            for a in &parts.args {
                self.eval(fr, *a);
            }
            let local = matches(&self.spec.local_sources, &callee);
            return Some(Taint::source(
                line_of(n),
                format!("source: {callee}(…)"),
                local,
            ));
        }
        let recv = parts.receiver.and_then(|r| self.eval(fr, r));
        let args: Vec<T> = parts.args.iter().map(|a| self.eval(fr, *a)).collect();
        let text = self.text(n);

        // Sinks.
        let sinks: Vec<_> = self
            .spec
            .sinks
            .iter()
            .filter(|s| matches(&s.calls, &callee))
            .filter(|s| s.requires.as_ref().is_none_or(|r| r.is_match(text)))
            .filter(|s| s.unless.as_ref().is_none_or(|r| !r.is_match(text)))
            .cloned()
            .collect();
        // A sink's result is new data from the system (a cursor, a file, a
        // process), not the input: it is clean.
        let is_sink = !sinks.is_empty();
        for s in sinks {
            // Each argument on its own: a sanitized argument next to a
            // parameter does not make the call a finding.
            let mut reaching: Vec<&Taint> = args
                .iter()
                .enumerate()
                .filter(|(i, _)| {
                    if s.args.is_empty() {
                        true
                    } else {
                        *i < parts.positional && s.args.contains(i)
                    }
                })
                .filter_map(|(_, a)| a.as_ref())
                .chain(recv.as_ref().filter(|_| s.receiver))
                .filter(|t| t.hits(s.category))
                .collect();
            reaching.sort_by_key(|t| !t.src);
            if let Some(t) = reaching.first().map(|t| (*t).clone()) {
                self.report(fr, s.category, n, &t, &format!("{callee}(…)"));
            }
        }

        if is_sink {
            return None;
        }

        // Sanitizers.
        if let Some(z) = self
            .spec
            .sanitizers
            .iter()
            .find(|z| matches(&z.calls, &callee))
        {
            if z.mask == u16::MAX {
                return None;
            }
            let mask = z.mask;
            // Cleaned for some categories; whether it is still text follows
            // the rule of calls the spec does not know (`json.loads(x)` is
            // an opaque document, `x.strip()` text).
            let all = args.iter().cloned().fold(None, union);
            return self
                .unknown_call(&callee, parts.receiver, recv, all)
                .map(|mut t| {
                    t.cleared |= mask;
                    t
                });
        }

        // A lookup in a table of constants (`REPORTS.get(name)`): the value
        // is the program's; only a default argument can be the caller's.
        if matches!(
            parts.name.as_str(),
            "get" | "fetch" | "getOrDefault" | "get_or_default"
        ) && let Some(r) = parts.receiver
            && recv.is_none()
            && self.constant_table(fr, r)
        {
            return args.get(1).cloned().flatten();
        }

        // Collections with constant keys and indexes.
        if let Some(key) = &recv_key
            && let Some(t) = self.collection(fr, key, &parts.name, &parts.args, &args)
        {
            return t;
        }

        // Propagators: the arguments flow into the receiver.
        let all_args = args.iter().cloned().fold(None, union);
        if matches(&self.spec.propagators, &callee)
            && let (Some(r), Some(key)) = (parts.receiver, recv_key.clone())
            && all_args.is_some()
            && matches!(self.lang.role(r.kind()), Role::Ident | Role::Member)
        {
            let old = fr.vars.get(&key).cloned().flatten();
            let t = all_args
                .clone()
                .map(|t| t.step(line_of(n), format!("added to `{key}`")));
            fr.vars.insert(key, union(old, t));
        }

        // The file's own functions.
        let own = parts.receiver.is_none_or(|r| {
            matches!(self.text(r), "self" | "this" | "cls" | "@" | "$this")
                || matches!(self.lang.role(r.kind()), Role::New)
                || !self.is_spec_call(&callee)
        });
        if own
            && let Some(func) = self.funcs.get(&parts.name).copied()
            && let Some(s) = self.summary(func)
        {
            self.called.insert(s.name.clone());
            let mut out: T = s.ret.clone().filter(|r| r.src);
            if let Some(r) = &s.ret {
                for (i, a) in args.iter().enumerate() {
                    let bit = i + s.offset;
                    if bit < 64
                        && r.params & (1 << bit) != 0
                        && let Some(a) = a
                    {
                        // The caller's flow, then the callee's own steps
                        // (its parameter, its return).
                        let mut t = Taint {
                            flow: std::rc::Rc::new(a.then(&r.flow)),
                            ..a.clone()
                        };
                        t.cleared |= r.cleared;
                        t.opaque = r.opaque;
                        out = union(out, Some(t));
                    }
                }
            }
            for ps in &s.sinks {
                for (i, a) in args.iter().enumerate() {
                    let bit = i + s.offset;
                    let Some(a) = a else { continue };
                    if bit >= 64 || ps.params & (1 << bit) == 0 || !a.hits(ps.category) {
                        continue;
                    }
                    let passed = a.step(line_of(n), format!("passed to {}()", s.name));
                    let flow = passed.then(&ps.flow);
                    if a.reports(ps.category) {
                        self.hits.push(super::analyze::Hit {
                            category: ps.category,
                            span: ps.span,
                            flow: flow.clone(),
                            function: ps.function.clone(),
                        });
                    }
                    if a.params != 0 {
                        fr.sinks.push(ParamSink {
                            params: a.params,
                            flow,
                            ..ps.clone()
                        });
                    }
                }
            }
            return out;
        }
        self.unknown_call(&callee, parts.receiver, recv, all_args)
    }

    /// The value of a call the spec and the file do not define: its
    /// receiver and arguments. A method of a tainted value (`name.strip()`),
    /// of a string literal (`"<p>{}</p>".format(x)`) and the spec's
    /// `text_calls` (`str(x)`) keep their text; anything else is opaque.
    fn unknown_call(&self, callee: &str, receiver: Option<Node<'t>>, recv: T, args: T) -> T {
        let literal = receiver.is_some_and(|r| {
            let k = r.kind();
            k.contains("string") || k == "template_literal"
        });
        if literal {
            return text(union(recv, args));
        }
        if let Some(r) = recv {
            let opaque = r.opaque;
            return union(Some(r), args).map(|mut t| {
                t.opaque = opaque;
                t
            });
        }
        if matches(&self.spec.text_calls, callee) {
            return args;
        }
        args.map(|mut t| {
            t.opaque = true;
            t
        })
    }

    /// Whether `callee` is named by the spec (then a same-named function of
    /// the file does not shadow it).
    fn is_spec_call(&self, callee: &str) -> bool {
        let s = self.spec;
        matches(&s.propagators, callee)
            || s.sinks.iter().any(|k| matches(&k.calls, callee))
            || s.sanitizers.iter().any(|z| matches(&z.calls, callee))
    }

    /// Maps with constant keys (`put`/`get`) and lists with constant
    /// indexes (`add`/`remove`/`get`): `Some(value)` when modelled.
    fn collection(
        &mut self,
        fr: &mut Frame,
        key: &str,
        name: &str,
        arg_nodes: &[Node<'t>],
        args: &[T],
    ) -> Option<T> {
        let lit = |i: usize| {
            arg_nodes
                .get(i)
                .and_then(|a| super::consts::literal_key(*a, self.src))
        };
        if let Some(list) = fr.lists.get_mut(key) {
            match (name, args.len()) {
                ("add" | "append" | "push", 1) => {
                    list.push(args[0].clone());
                    return Some(None);
                }
                ("remove" | "pop", 1) => {
                    if let Some(i) = lit(0).and_then(|k| k.parse::<usize>().ok())
                        && i < list.len()
                    {
                        return Some(list.remove(i));
                    }
                }
                ("get", 1) => {
                    if let Some(i) = lit(0).and_then(|k| k.parse::<usize>().ok()) {
                        return Some(list.get(i).cloned().flatten());
                    }
                }
                _ => {}
            }
            // Anything else: the list is no longer followed element by element.
            let all = list.iter().cloned().fold(None, union);
            fr.lists.remove(key);
            let old = fr.vars.get(key).cloned().flatten();
            fr.vars.insert(key.to_string(), union(old, all));
            return None;
        }
        match (name, args.len()) {
            ("put" | "setdefault" | "putValue", 2) => {
                let k = lit(0)?;
                let t = args[1].clone();
                let old = fr.vars.get(key).cloned().flatten();
                fr.vars.insert(format!("{key}[{k}]"), t.clone());
                fr.vars.insert(key.to_string(), union(old, t));
                None
            }
            ("get" | "getOrDefault", 1 | 2) => {
                let k = lit(0)?;
                let v = fr.vars.get(&format!("{key}[{k}]"))?.clone();
                Some(union(v, args.get(1).cloned().flatten()))
            }
            _ => None,
        }
    }
}
