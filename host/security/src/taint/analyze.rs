//! The per-function dataflow: a walk over a function's body in source
//! order with an environment of variables (names, attribute paths, keys of
//! maps with constant keys, lists with constant indexes). Assignments in a
//! branch or loop are weak (the old value stays possible); a branch whose
//! condition is a constant is walked alone. Calls to functions of the same
//! file use their summaries (parameter → return, parameter → sink).

use std::collections::HashMap;
use std::rc::Rc;

use agent_syntax::tree_sitter::Node;

use super::category::Category;
use super::consts::Const;
use super::lang::{Lang, Role, is_comparison, squash};
use super::spec::{LangSpec, Pat};
use super::value::{Step, T, Taint, text, union};

/// Node visits allowed per file (a hostile file cannot make the walk slow).
const MAX_VISITS: usize = 2_000_000;

/// Deepest expression nesting walked (a hostile file cannot overflow the
/// worker's stack); deeper parts are clean.
const MAX_DEPTH: usize = 96;

/// A sink reached by tainted data.
#[derive(Debug, Clone)]
pub struct Hit {
    /// The category.
    pub category: Category,
    /// The sink node's start (1-based line and column) and end.
    pub span: (u32, u32, u32, u32),
    /// Source → steps → sink.
    pub flow: Vec<Step>,
    /// The enclosing function.
    pub function: Option<String>,
}

/// A sink a function's parameters reach.
#[derive(Debug, Clone)]
pub(super) struct ParamSink {
    pub params: u64,
    pub category: Category,
    pub span: (u32, u32, u32, u32),
    pub flow: Vec<Step>,
    pub function: Option<String>,
}

/// What a call of a same-file function does.
#[derive(Debug, Clone)]
pub(super) struct Summary {
    pub ret: T,
    pub sinks: Vec<ParamSink>,
    /// 1 when the first parameter is `self`/`cls` (not an argument).
    pub offset: usize,
    pub name: String,
}

/// One function's state during the walk.
#[derive(Default)]
pub(super) struct Frame {
    pub vars: HashMap<String, T>,
    pub aliases: HashMap<String, String>,
    pub consts: HashMap<String, Const>,
    pub lists: HashMap<String, Vec<T>>,
    /// Variables holding a collection of constants (allowlists).
    pub allowlists: std::collections::HashSet<String>,
    /// Variables parsed from another (`u = urlparse(x)`: `u` → `x`).
    pub derived: HashMap<String, String>,
    pub weak: u32,
    pub ret: T,
    pub sinks: Vec<ParamSink>,
    pub name: Option<String>,
}

/// The walk over one file.
pub struct Analyzer<'a, 't> {
    pub(super) lang: &'static Lang,
    pub(super) spec: &'a LangSpec,
    pub(super) src: &'a str,
    pub(super) funcs: HashMap<String, Node<'t>>,
    pub(super) summaries: HashMap<usize, Option<Rc<Summary>>>,
    pub(super) visits: usize,
    pub(super) depth: usize,
    /// Sinks reached from real sources.
    pub hits: Vec<Hit>,
    /// Names of the file's functions called in the file.
    pub(super) called: std::collections::HashSet<String>,
    /// Constants of the top-level code (`DEBUG = False`), seen by every
    /// function.
    pub(super) globals: HashMap<String, Const>,
}

/// What the walk over a file found.
pub struct Outcome {
    /// Sinks reached from real sources.
    pub hits: Vec<Hit>,
    /// Sinks a parameter of a function nobody in the file calls reaches
    /// (line, category): the caller is elsewhere, the dataflow cannot say.
    pub open: Vec<(u32, Category)>,
}

pub(super) fn line_of(n: Node<'_>) -> u32 {
    n.start_position().row as u32 + 1
}

pub(super) fn span_of(n: Node<'_>) -> (u32, u32, u32, u32) {
    let (s, e) = (n.start_position(), n.end_position());
    (
        s.row as u32 + 1,
        s.column as u32 + 1,
        e.row as u32 + 1,
        e.column as u32 + 1,
    )
}

pub(super) fn matches(pats: &[Pat], text: &str) -> bool {
    pats.iter().any(|p| p.matches(text))
}

impl<'a, 't> Analyzer<'a, 't> {
    /// Walks every function of `root` and the top-level code.
    pub fn run(lang: &'static Lang, spec: &'a LangSpec, src: &'a str, root: Node<'t>) -> Outcome {
        let mut functions = Vec::new();
        collect_functions(lang, root, &mut functions);
        let mut funcs = HashMap::new();
        for f in &functions {
            if let Some(name) = super::lang::function_name(*f, src) {
                funcs.entry(name).or_insert(*f);
            }
        }
        let mut a = Analyzer {
            lang,
            spec,
            src,
            funcs,
            summaries: HashMap::new(),
            visits: 0,
            depth: 0,
            hits: Vec::new(),
            called: std::collections::HashSet::new(),
            globals: HashMap::new(),
        };
        let mut top = Frame::default();
        a.eval(&mut top, root);
        a.globals = top.consts;
        for f in functions {
            a.summary(f);
        }
        let mut open = Vec::new();
        for s in a.summaries.values().flatten() {
            if a.called.contains(&s.name) {
                continue;
            }
            open.extend(s.sinks.iter().map(|p| (p.span.0, p.category)));
        }
        let mut seen = std::collections::HashSet::new();
        let hits = a
            .hits
            .into_iter()
            .filter(|h| seen.insert((h.span, h.category)))
            .collect();
        Outcome { hits, open }
    }

    pub(super) fn text(&self, n: Node<'_>) -> &'a str {
        &self.src[n.byte_range()]
    }

    /// The summary of `func`, computing it (and recording its hits) once.
    pub(super) fn summary(&mut self, func: Node<'t>) -> Option<Rc<Summary>> {
        if let Some(s) = self.summaries.get(&func.id()) {
            return s.clone();
        }
        self.summaries.insert(func.id(), None);
        let params = super::lang::params(self.lang, func, self.src);
        let name = super::lang::function_name(func, self.src).unwrap_or_default();
        let decorated = self.decorators(func);
        let from_decorator = decorated
            .iter()
            .any(|d| self.spec.param_decorators.iter().any(|p| p == d));
        let mut fr = Frame {
            name: Some(name.clone()),
            consts: self.globals.clone(),
            ..Frame::default()
        };
        let offset = usize::from(
            params
                .first()
                .is_some_and(|(p, _)| p == "self" || p == "cls"),
        );
        for (i, (p, node)) in params.iter().enumerate() {
            let annotated = self.annotated(*node);
            let src = (from_decorator && i >= offset) || annotated;
            let t = Taint {
                flow: Rc::new(vec![Step {
                    line: line_of(*node),
                    note: if src {
                        format!("source: request parameter `{p}` of {name}()")
                    } else {
                        format!("parameter `{p}` of {name}()")
                    },
                }]),
                cleared: 0,
                src,
                params: if i < 64 { 1 << i } else { 0 },
                opaque: false,
                local: false,
            };
            fr.vars.insert(p.clone(), Some(t));
        }
        if let Some(body) = func.child_by_field_name(self.lang.body_field) {
            self.eval(&mut fr, body);
        } else {
            // Arrow functions with an expression body, Ruby methods.
            let mut cursor = func.walk();
            let kids: Vec<Node<'t>> = func.named_children(&mut cursor).collect();
            for k in kids {
                if Some(k) != func.child_by_field_name(self.lang.params_field)
                    && Some(k) != func.child_by_field_name("name")
                {
                    let t = self.eval(&mut fr, k);
                    if func.kind() == "arrow_function" {
                        fr.ret = union(fr.ret.take(), t);
                    }
                }
            }
        }
        // Values returned by decorated handlers are responses.
        if let Some(t) = fr.ret.clone() {
            let cats: Vec<Category> = self
                .spec
                .sinks
                .iter()
                .filter(|s| s.returns_of_decorated.iter().any(|d| decorated.contains(d)))
                .map(|s| s.category)
                .collect();
            let line = t.flow.last().map_or(line_of(func), |s| s.line);
            for c in cats {
                // An opaque value (a parsed document, another module's
                // result) is not HTML text built from the input.
                if t.reports(c) && !t.opaque {
                    self.hits.push(Hit {
                        category: c,
                        span: (line, 1, line, 1),
                        flow: t.then(&[Step {
                            line,
                            note: format!("sink: returned as the response of {name}()"),
                        }]),
                        function: Some(name.clone()),
                    });
                }
            }
        }
        let s = Rc::new(Summary {
            ret: fr.ret,
            sinks: fr.sinks,
            offset,
            name,
        });
        self.summaries.insert(func.id(), Some(s.clone()));
        Some(s)
    }

    /// Last segments of the callees of `func`'s decorators (`route` for
    /// `@app.route("/x")`).
    fn decorators(&self, func: Node<'t>) -> Vec<String> {
        let Some(parent) = func.parent().filter(|p| p.kind() == "decorated_definition") else {
            return Vec::new();
        };
        let mut cursor = parent.walk();
        parent
            .named_children(&mut cursor)
            .filter(|c| c.kind() == "decorator")
            .map(|d| {
                let t = squash(d, self.src);
                let t = t.trim_start_matches('@');
                let t = t.split('(').next().unwrap_or(t);
                t.rsplit('.').next().unwrap_or(t).to_string()
            })
            .collect()
    }

    /// Whether a parameter node carries a source annotation.
    fn annotated(&self, p: Node<'t>) -> bool {
        if self.spec.param_annotations.is_empty() {
            return false;
        }
        let text = self.text(p);
        text.split('@').skip(1).any(|a| {
            let name: String = a
                .chars()
                .take_while(|c| c.is_alphanumeric() || *c == '_' || *c == '.')
                .collect();
            let last = name.rsplit('.').next().unwrap_or(&name);
            self.spec.param_annotations.iter().any(|x| x == last)
        })
    }

    /// The value of `n`, recording sinks it reaches.
    pub(super) fn eval(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        self.visits += 1;
        if self.visits > MAX_VISITS || self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let t = self.eval_node(fr, n);
        self.depth -= 1;
        t
    }

    fn eval_node(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        match self.lang.role(n.kind()) {
            Role::Ident => self.ident(fr, n),
            Role::Member => self.member(fr, n),
            Role::Subscript => self.subscript(fr, n),
            Role::Call | Role::New => self.call(fr, n),
            Role::Assign(l, r) => self.assign(fr, n, l, r, false),
            Role::AugAssign => self.assign(fr, n, "left", "right", true),
            Role::Function | Role::Skip => None,
            Role::Compare => {
                self.children(fr, n);
                None
            }
            Role::Binary => {
                let op = n
                    .child_by_field_name("operator")
                    .map(|o| self.text(o).trim().to_string());
                let t = self.children(fr, n);
                if op.as_deref().is_some_and(is_comparison) {
                    None
                } else {
                    text(t)
                }
            }
            Role::Return => {
                let t = self.children(fr, n);
                let t = t.map(|t| {
                    t.step(
                        line_of(n),
                        format!(
                            "returned from {}()",
                            fr.name.as_deref().unwrap_or("the function")
                        ),
                    )
                });
                fr.ret = union(fr.ret.take(), t.clone());
                t
            }
            Role::If => self.if_(fr, n),
            Role::Ternary => self.ternary(fr, n),
            Role::Switch => self.switch(fr, n),
            Role::Branch => {
                fr.weak += 1;
                let t = self.children(fr, n);
                fr.weak -= 1;
                t
            }
            Role::ForEach(target, iterable) => {
                let it = n
                    .child_by_field_name(iterable)
                    .and_then(|i| self.eval(fr, i));
                fr.weak += 1;
                if let Some(t) = n.child_by_field_name(target) {
                    self.bind(fr, t, it);
                }
                let mut cursor = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
                for k in kids {
                    if Some(k) != n.child_by_field_name(target)
                        && Some(k) != n.child_by_field_name(iterable)
                    {
                        self.eval(fr, k);
                    }
                }
                fr.weak -= 1;
                None
            }
            Role::Other if super::shape::is_comprehension(n.kind()) => {
                // `[f(x) for x in xs if c]`: the clauses bind `x` first.
                let body = n.child_by_field_name("body");
                let mut cursor = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
                // Its variables are its own (not an earlier loop's).
                for k in &kids {
                    if let Some(target) = k.child_by_field_name("left") {
                        for v in std::iter::once(target).chain(descendants(target)) {
                            fr.vars.remove(&squash(v, self.src));
                        }
                    }
                }
                for k in kids.into_iter().filter(|k| Some(*k) != body) {
                    self.eval(fr, k);
                }
                body.and_then(|b| self.eval(fr, b))
            }
            Role::Other => {
                let t = self.children(fr, n);
                // Concatenation, formatting, interpolation build text.
                if super::shape::is_text_building(n.kind()) {
                    text(t)
                } else {
                    t
                }
            }
        }
    }

    /// The union of the named children's values.
    pub(super) fn children(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        let mut cursor = n.walk();
        let kids: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
        let mut t = None;
        for k in kids {
            let v = self.eval(fr, k);
            t = union(t, v);
        }
        t
    }

    fn source(&self, n: Node<'t>, text: &str) -> T {
        let local = matches(&self.spec.local_sources, text);
        Some(Taint::source(line_of(n), format!("source: {text}"), local))
    }

    fn ident(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        let text = self.text(n);
        if matches(&self.spec.source_exprs, text) {
            return self.source(n, text);
        }
        fr.vars.get(text).cloned().flatten()
    }

    fn member(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        let text = squash(n, self.src);
        if matches(&self.spec.source_exprs, &text) {
            return self.source(n, &text);
        }
        if let Some(t) = fr.vars.get(&text) {
            return t.clone();
        }
        let base = n
            .child_by_field_name("object")
            .or_else(|| n.child_by_field_name("operand"))
            .or_else(|| n.named_child(0));
        base.and_then(|b| self.eval(fr, b))
    }

    /// `base` and the constant key of a subscript node.
    pub(super) fn subscript_parts(&self, n: Node<'t>) -> Option<(Node<'t>, Option<String>)> {
        let base = ["value", "array", "object", "operand"]
            .iter()
            .find_map(|f| n.child_by_field_name(f))
            .or_else(|| n.named_child(0))?;
        let index = ["subscript", "index"]
            .iter()
            .find_map(|f| n.child_by_field_name(f))
            .or_else(|| n.named_child(1));
        let key = index.and_then(|i| super::consts::literal_key(i, self.src));
        Some((base, key))
    }

    fn subscript(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        let text = squash(n, self.src);
        if matches(&self.spec.source_exprs, &text) {
            return self.source(n, &text);
        }
        let (base, key) = self.subscript_parts(n)?;
        let btext = squash(base, self.src);
        if let Some(k) = &key {
            if let Some(t) = fr.vars.get(&format!("{btext}[{k}]")) {
                return t.clone();
            }
            if let (Some(list), Ok(i)) = (fr.lists.get(&btext), k.parse::<usize>()) {
                return list.get(i).cloned().flatten();
            }
        }
        // An entry of a table of constants (`ROUTES[name]`) is the program's.
        let t = self.eval(fr, base);
        if t.is_none() && self.constant_table(fr, base) {
            return None;
        }
        // An element of a document is text again (`data["name"]`).
        super::value::text(t)
    }

    fn assign(&mut self, fr: &mut Frame, n: Node<'t>, lf: &str, rf: &str, aug: bool) -> T {
        let lhs = n.child_by_field_name(lf);
        let rhs = if rf.is_empty() {
            n.named_child(0)
        } else {
            n.child_by_field_name(rf)
        };
        let rhs = rhs?;
        let mut t = self.eval(fr, rhs);
        let Some(lhs) = lhs else { return t };
        if aug {
            let old = self.eval(fr, lhs);
            t = union(old, t);
        }
        let key = squash(lhs, self.src);
        match self.lang.role(rhs.kind()) {
            Role::Call | Role::New if !aug => {
                let parts = super::lang::call_parts(self.lang, rhs, self.src);
                fr.aliases
                    .insert(key.clone(), format!("{}()", parts.callee));
                if matches!(parts.name.as_str(), "ArrayList" | "LinkedList" | "Vector") {
                    fr.lists.insert(key.clone(), Vec::new());
                } else {
                    fr.lists.remove(&key);
                }
            }
            _ => {
                fr.aliases.remove(&key);
                if rhs.kind() == "list" && rhs.named_child_count() == 0 {
                    fr.lists.insert(key.clone(), Vec::new());
                } else {
                    fr.lists.remove(&key);
                }
            }
        }
        match self.parsed_from(rhs).filter(|_| !aug) {
            Some(w) => fr.derived.insert(key.clone(), w),
            None => fr.derived.remove(&key),
        };
        if !aug && self.const_collection_of(rhs) {
            fr.allowlists.insert(key.clone());
        } else {
            fr.allowlists.remove(&key);
        }
        match (aug, self.const_of(fr, rhs)) {
            (false, Some(c)) if fr.weak == 0 => {
                fr.consts.insert(key, c);
            }
            _ => {
                fr.consts.remove(&key);
            }
        }
        self.bind(fr, lhs, t.clone());
        t
    }

    /// Stores `t` into the target `lhs` (names, paths, keys, tuples).
    pub(super) fn bind(&mut self, fr: &mut Frame, lhs: Node<'t>, t: T) {
        let kind = lhs.kind();
        let role = self.lang.role(kind);
        let store = |fr: &mut Frame, key: String, t: T| {
            let v = if fr.weak > 0 {
                union(fr.vars.get(&key).cloned().flatten(), t)
            } else {
                t
            };
            fr.vars.insert(key, v);
        };
        let line = line_of(lhs);
        match role {
            Role::Ident | Role::Member => {
                let key = squash(lhs, self.src);
                self.assign_sink(fr, lhs, &key, &t);
                let t = t.map(|t| t.step(line, format!("assigned to `{key}`")));
                store(fr, key, t);
            }
            Role::Subscript => {
                let Some((base, k)) = self.subscript_parts(lhs) else {
                    return;
                };
                let btext = squash(base, self.src);
                self.assign_sink(fr, lhs, &btext, &t);
                let t = t.map(|t| t.step(line, format!("stored in `{}`", squash(lhs, self.src))));
                if let Some(k) = k {
                    store(fr, format!("{btext}[{k}]"), t.clone());
                }
                let old = fr.vars.get(&btext).cloned().flatten();
                fr.vars.insert(btext, union(old, t));
            }
            _ => {
                let mut cursor = lhs.walk();
                let kids: Vec<Node<'t>> = lhs.named_children(&mut cursor).collect();
                if kids.is_empty() && kind.contains("identifier") {
                    let key = squash(lhs, self.src);
                    store(fr, key, t);
                    return;
                }
                for k in kids {
                    self.bind(fr, k, t.clone());
                }
            }
        }
    }

    /// Assignment sinks (`session["k"] = v`, `el.innerHTML = v`).
    fn assign_sink(&mut self, fr: &mut Frame, lhs: Node<'t>, target: &str, t: &T) {
        let Some(t) = t else { return };
        let cats: Vec<Category> = self
            .spec
            .sinks
            .iter()
            .filter(|s| matches(&s.assigns, target))
            .map(|s| s.category)
            .collect();
        for c in cats {
            self.report(fr, c, lhs, t, &format!("assignment to `{target}`"));
        }
    }

    /// Records that `t` reaches a sink of `c` at `node`.
    pub(super) fn report(
        &mut self,
        fr: &mut Frame,
        c: Category,
        node: Node<'t>,
        t: &Taint,
        what: &str,
    ) {
        if !t.hits(c) || (c == Category::Xss && self.non_html_response(node)) {
            return;
        }
        let sink = Step {
            line: line_of(node),
            note: format!("sink: {what}"),
        };
        if t.reports(c) {
            self.hits.push(Hit {
                category: c,
                span: span_of(node),
                flow: t.then(std::slice::from_ref(&sink)),
                function: fr.name.clone(),
            });
        }
        if t.params != 0 {
            fr.sinks.push(ParamSink {
                params: t.params,
                category: c,
                span: span_of(node),
                flow: t.then(&[sink]),
                function: fr.name.clone(),
            });
        }
    }
}

/// Every function node under `n`, outermost first.
fn collect_functions<'t>(lang: &Lang, n: Node<'t>, out: &mut Vec<Node<'t>>) {
    for c in descendants(n) {
        if lang.role(c.kind()) == Role::Function {
            out.push(c);
        }
    }
}

/// Every named node under `n` in document order, without recursion.
pub(super) fn descendants(n: Node<'_>) -> Vec<Node<'_>> {
    let mut out = Vec::new();
    let mut cursor = n.walk();
    if !cursor.goto_first_child() {
        return out;
    }
    loop {
        let node = cursor.node();
        if node.is_named() {
            out.push(node);
        }
        if cursor.goto_first_child() {
            continue;
        }
        loop {
            if cursor.goto_next_sibling() {
                break;
            }
            if !cursor.goto_parent() || cursor.node() == n {
                return out;
            }
        }
    }
}
