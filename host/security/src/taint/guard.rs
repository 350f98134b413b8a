//! Guards: tests that make a variable safe where they hold. Allowlists
//! (`x in ALLOWED`, `x == "a"`, `allowed.contains(x)` of a collection of
//! constants, PHP `in_array`), type and pattern tests (`is_numeric($x)`,
//! `x.matches("^[a-z0-9]+$")`), and checks of a URL's host or a local path
//! (`ALLOWED.contains(url.getHost())`, `next.startsWith("/")`,
//! `url_has_allowed_host_and_scheme(x)`), which clean `x` for requests and
//! redirects only. `branch.rs` applies them: a guard cleans the branch it
//! protects, and what follows a negated guard whose branch leaves
//! (`return`, `exit`) or resets the variable to a constant
//! (`if (!ok(x)) x = "/";`).

use agent_syntax::tree_sitter::Node;

use super::analyze::{Analyzer, Frame};
use super::category::Category;
use super::consts::{literal_key, unwrap};
use super::lang::{Role, call_parts, squash};
use super::value::T;

/// What a test guards: variables (each with the category bits it cleans)
/// and whether the test holds when they are *not* safe (`not in`, `!`).
#[derive(Debug, Clone)]
pub(super) struct Guard {
    pub(super) vars: Vec<(String, u16)>,
    pub(super) negated: bool,
}

/// Every category.
pub(super) const ALL: u16 = u16::MAX;

/// Requests and redirects: what a host or local-path check protects.
fn url_bits() -> u16 {
    Category::Ssrf.bit() | Category::Redirect.bit()
}

/// `t` cleaned for `mask`.
pub(super) fn cleaned(t: T, mask: u16) -> T {
    if mask == ALL {
        return None;
    }
    t.map(|mut t| {
        t.cleared |= mask;
        t
    })
}

/// The categories a regex literal's full match cleans: letters, digits
/// and a few safe characters, anchored at both ends
/// (`^[A-Za-z0-9_-]{1,16}$`): every category; a class that also allows
/// `.` and `/` leaves paths open. `None` for anything wider.
fn restrictive_regex(text: &str) -> Option<u16> {
    let r = text
        .trim_start_matches(['r', 'b'])
        .trim_matches(['"', '\'', '`', '/']);
    let anchored = r.starts_with('^') && (r.ends_with('$') || r.ends_with("\\z"));
    if !anchored || r.contains("[^") || r.contains("\\S") {
        return None;
    }
    // A `.` outside a class matches anything.
    let mut depth = 0;
    let mut escaped = false;
    let mut class = String::new();
    for c in r.chars() {
        match (escaped, c) {
            (true, _) => escaped = false,
            (false, '\\') => escaped = true,
            (false, '[') => depth += 1,
            (false, ']') => depth -= 1,
            (false, '.') if depth == 0 => return None,
            _ => {}
        }
        if depth > 0 {
            class.push(c);
        }
    }
    if class.contains('.') && class.contains('/') {
        Some(ALL & !Category::Path.bit())
    } else {
        Some(ALL)
    }
}

impl<'t> Analyzer<'_, 't> {
    /// The guard of condition `n`, when it is one.
    pub(super) fn guard(&self, fr: &Frame, n: Node<'t>) -> Option<Guard> {
        let mut n = unwrap(n);
        let mut negated = false;
        for _ in 0..8 {
            if !matches!(
                n.kind(),
                "not_operator" | "unary_expression" | "unary_op_expression" | "unary"
            ) {
                return self.test(fr, n).map(|mut g| {
                    g.negated ^= negated;
                    g
                });
            }
            let op = n
                .child_by_field_name("operator")
                .map(|o| self.text(o).trim());
            if op.is_some_and(|o| o != "!" && o != "not") {
                return None;
            }
            n = unwrap(
                n.child_by_field_name("argument")
                    .or_else(|| n.child_by_field_name("operand"))
                    .or_else(|| n.named_child(0))?,
            );
            negated = !negated;
        }
        None
    }

    /// [`Self::guard`] of a test without a leading negation.
    fn test(&self, fr: &Frame, n: Node<'t>) -> Option<Guard> {
        let kind = n.kind();
        // `a || !allowed(x)` (then leaving) and `a && allowed(x)` (the
        // branch) guard `x` as their allowlist side does.
        if let Some(op) = n
            .child_by_field_name("operator")
            .map(|o| self.text(o).trim())
            && matches!(op, "||" | "&&" | "or" | "and")
        {
            // Every such side holds there (`!ok(a) || !ok(b)`, then leaving:
            // both passed).
            // When every side is a guard of the other kind, any one of
            // them decides (`host != null && !ok(host)`, then resetting:
            // either passed).
            let want_negated = matches!(op, "||" | "or");
            let sides: Vec<Option<Guard>> = [
                n.child_by_field_name("left"),
                n.child_by_field_name("right"),
            ]
            .into_iter()
            .map(|s| s.and_then(|s| self.guard(fr, s)))
            .collect();
            let merge = |negated: bool| {
                let vars: Vec<(String, u16)> = sides
                    .iter()
                    .flatten()
                    .filter(|g| g.negated == negated)
                    .flat_map(|g| g.vars.clone())
                    .collect();
                (!vars.is_empty()).then_some(Guard { vars, negated })
            };
            if sides
                .iter()
                .all(|g| g.as_ref().is_some_and(|g| g.negated != want_negated))
            {
                return merge(!want_negated);
            }
            return merge(want_negated);
        }
        let one = |x: Node<'t>, negated: bool| {
            Some(Guard {
                vars: self.keys(fr, x),
                negated,
            })
        };
        // A URL's host compared with anything (`uri.getHost() != null`,
        // `u.hostname == "a"`): a host check, for requests and redirects.
        if matches!(kind, "binary_expression" | "comparison_operator" | "binary")
            && let (Some(l), Some(op)) = (
                n.child_by_field_name("left").or_else(|| n.named_child(0)),
                n.child_by_field_name("operator")
                    .map(|o| self.text(o).trim().to_string()),
            )
        {
            let lt = squash(l, self.src);
            let host = [
                ".getHost()",
                ".hostname",
                ".host",
                ".Host",
                ".Hostname()",
                ".netloc",
            ]
            .iter()
            .any(|h| lt.ends_with(h));
            if host && matches!(op.as_str(), "==" | "===" | "!=" | "!==") {
                let vars = self
                    .keys(fr, l)
                    .into_iter()
                    .map(|(v, _)| (v, url_bits()))
                    .collect();
                return Some(Guard {
                    vars,
                    negated: op.starts_with('!'),
                });
            }
        }
        if kind == "comparison_operator" {
            let l = n.named_child(0)?;
            let r = n.named_child(1)?;
            let op: String = self.text(n)
                [l.end_byte() - n.start_byte()..r.start_byte() - n.start_byte()]
                .split_whitespace()
                .collect::<Vec<_>>()
                .join(" ");
            let const_side = |x: Node<'t>| {
                literal_key(x, self.src).is_some()
                    || matches!(x.kind(), "list" | "set" | "tuple")
                    || self.allowlist(fr, x)
                    || self
                        .text(x)
                        .chars()
                        .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
            };
            return match op.as_str() {
                "in" if const_side(r) => one(l, false),
                "not in" if const_side(r) => one(l, true),
                "==" | "!=" if literal_key(r, self.src).is_some() => one(l, op == "!="),
                _ => None,
            };
        }
        if matches!(kind, "binary_expression" | "binary") {
            let op = self.text(n.child_by_field_name("operator")?).trim();
            let l = n.child_by_field_name("left")?;
            let r = n.child_by_field_name("right")?;
            // PHP containment: `strpos($path, $base) === 0`.
            if matches!(op, "===" | "!==" | "==" | "!=")
                && literal_key(r, self.src).as_deref() == Some("0")
                && self.lang.role(unwrap(l).kind()) == Role::Call
            {
                let parts = call_parts(self.lang, unwrap(l), self.src);
                if parts.name == "strpos" {
                    let subject = *parts.args.first()?;
                    let bit = Category::Path.bit();
                    return Some(self.masked_all(fr, subject, bit, op.starts_with('!')));
                }
            }
            if matches!(op, "==" | "===" | "!=" | "!==") && literal_key(r, self.src).is_some() {
                return one(l, op.starts_with('!'));
            }
            return None;
        }
        // `allowed[host]` as a condition: membership in a map of flags.
        if self.lang.role(kind) == Role::Subscript {
            let (_, _) = self.subscript_parts(n)?;
            let index = ["index", "subscript"]
                .iter()
                .find_map(|f| n.child_by_field_name(f))
                .or_else(|| n.named_child(1))?;
            return one(index, false);
        }
        if !matches!(
            kind,
            "method_invocation" | "call_expression" | "call" | "function_call_expression"
        ) {
            return None;
        }
        let parts = call_parts(self.lang, n, self.src);
        let arg = |i: usize| parts.args.get(i).copied();
        let url_only = |x: Node<'t>| {
            Some(Guard {
                vars: vec![(self.guard_key(x), url_bits())],
                negated: false,
            })
        };
        match parts.name.as_str() {
            // PHP: an allowlist or a type test of the first argument.
            "in_array" | "array_key_exists" | "is_numeric" | "ctype_digit" | "ctype_alnum"
            | "is_int"
                if parts.receiver.is_none() =>
            {
                one(arg(0)?, false)
            }
            "contains" | "includes" | "has" | "containsKey" | "include?" => {
                let r = parts.receiver?;
                let rt = self.text(r);
                let constant = rt
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit() || c == '.')
                    || self.allowlist(fr, r);
                if constant { one(arg(0)?, false) } else { None }
            }
            "equals" | "equalsIgnoreCase" => {
                let r = parts.receiver?;
                if literal_key(r, self.src).is_some() {
                    return one(arg(0)?, false);
                }
                if literal_key(arg(0)?, self.src).is_some() {
                    return one(r, false);
                }
                None
            }
            // A local path or a fixed origin: `next.startsWith("/")`,
            // `strings.HasPrefix(next, "/")`.
            "startsWith" | "startswith" | "start_with?" | "HasPrefix" => {
                // Go's `strings.HasPrefix(s, p)`: the receiver is the package.
                let (subject, prefix) = match parts.receiver {
                    Some(r) if parts.name != "HasPrefix" => (r, arg(0)?),
                    _ => (arg(0)?, arg(1)?),
                };
                match literal_key(prefix, self.src) {
                    Some(p)
                        if p.starts_with('/')
                            || p.starts_with("https://")
                            || p.starts_with("http://") =>
                    {
                        url_only(subject)
                    }
                    Some(_) => None,
                    // A prefix that is a variable: containment in a base
                    // directory (`real.startsWith(base)`).
                    None => Some(self.masked_all(fr, subject, Category::Path.bit(), false)),
                }
            }
            "str_starts_with" if parts.receiver.is_none() => {
                Some(self.masked_all(fr, arg(0)?, Category::Path.bit(), false))
            }
            "url_has_allowed_host_and_scheme" | "is_safe_url" | "isSafeUrl" => url_only(arg(0)?),
            // A restrictive pattern: `x.matches("^[a-z0-9]+$")`,
            // `re.fullmatch(r"[a-z]+", x)`, `/^[a-z]+$/.test(x)`.
            "matches" | "test" | "MatchString" => {
                let r = parts.receiver?;
                if parts.name == "matches" {
                    let mask = restrictive_regex(self.text(arg(0)?))?;
                    return Some(self.masked(fr, r, mask));
                }
                let pattern = if r.kind() == "regex" {
                    self.text(r).to_string()
                } else {
                    let args = r.child_by_field_name("arguments")?;
                    self.text(args.named_child(0)?).to_string()
                };
                let mask = restrictive_regex(&pattern)?;
                Some(self.masked(fr, arg(0)?, mask))
            }
            "fullmatch" | "match" if parts.callee.starts_with("re.") => {
                let p = self.text(arg(0)?);
                let text = p.trim_start_matches(['r', 'b']).trim_matches(['"', '\'']);
                let full = format!("^{}$", text.trim_start_matches('^').trim_end_matches('$'));
                let anchored = parts.name == "fullmatch" || text.ends_with('$');
                if !anchored {
                    return None;
                }
                let mask = restrictive_regex(&full)?;
                Some(self.masked(fr, arg(1)?, mask))
            }
            _ => None,
        }
    }

    /// A guard on `n` cleaning `mask` (the derived URL variables keep
    /// their request-and-redirect share).
    fn masked(&self, fr: &Frame, n: Node<'t>, mask: u16) -> Guard {
        let mut vars = self.keys(fr, n);
        if let Some(first) = vars.first_mut() {
            first.1 = mask;
        }
        Guard {
            vars,
            negated: false,
        }
    }

    /// A guard on `n` and the variables it is read from, each cleaning
    /// `mask`.
    fn masked_all(&self, fr: &Frame, n: Node<'t>, mask: u16, negated: bool) -> Guard {
        let vars = self
            .keys(fr, n)
            .into_iter()
            .map(|(v, _)| (v, mask))
            .collect();
        Guard { vars, negated }
    }

    /// The variables a tested expression stands for: itself (every
    /// category), and the variable a URL or host is read from
    /// (`url.getHost()`, `urlparse(u).hostname`, `p.hostname` with
    /// `p = urlparse(u)`: requests and redirects only).
    fn keys(&self, fr: &Frame, n: Node<'t>) -> Vec<(String, u16)> {
        let first = self.guard_key(n);
        let mut out = vec![(first.clone(), ALL)];
        let mut cur = self.strip_default(n);
        for _ in 0..8 {
            match self.lang.role(cur.kind()) {
                Role::Member | Role::Subscript => {
                    let Some(base) = cur
                        .child_by_field_name("object")
                        .or_else(|| cur.child_by_field_name("operand"))
                        .or_else(|| cur.child_by_field_name("value"))
                        .or_else(|| cur.named_child(0))
                    else {
                        break;
                    };
                    cur = unwrap(base);
                }
                Role::Call | Role::New => {
                    let parts = call_parts(self.lang, cur, self.src);
                    let Some(next) = parts.receiver.or_else(|| parts.args.first().copied()) else {
                        break;
                    };
                    cur = unwrap(next);
                }
                Role::Ident => {
                    let k = squash(cur, self.src);
                    if k != first {
                        out.push((k.clone(), url_bits()));
                    }
                    if let Some(w) = fr.derived.get(&k) {
                        out.push((w.clone(), url_bits()));
                    }
                    break;
                }
                _ => break,
            }
        }
        out
    }

    /// The variable key of a tested expression: `$x` for `$x ?? ""`,
    /// `$_GET[next]` for `$_GET["next"]` (the environment's key of a
    /// constant subscript).
    fn guard_key(&self, n: Node<'t>) -> String {
        let n = self.strip_default(n);
        if self.lang.role(n.kind()) == Role::Subscript
            && let Some((base, Some(k))) = self.subscript_parts(n)
        {
            return format!("{}[{k}]", squash(base, self.src));
        }
        squash(n, self.src)
    }

    /// `x` of `x ?? default` (PHP, JavaScript).
    fn strip_default(&self, n: Node<'t>) -> Node<'t> {
        let n = unwrap(n);
        if n.kind() == "binary_expression"
            && n.child_by_field_name("operator")
                .is_some_and(|o| self.text(o).trim() == "??")
            && let Some(l) = n.child_by_field_name("left")
        {
            return unwrap(l);
        }
        n
    }

    /// Whether `n` is a collection of constants: a literal (`{"a", "b"}`,
    /// `["a"]`, PHP `["a", "b"]`), `Set.of("a")`/`List.of`/`Arrays.asList`/
    /// `set([...])` of literals, or a variable assigned one.
    pub(super) fn allowlist(&self, fr: &Frame, n: Node<'t>) -> bool {
        self.const_collection(n, 0) || fr.allowlists.contains(&squash(unwrap(n), self.src))
    }

    /// Whether `n` names a constant table: an upper-case name (`REPORTS`,
    /// `Config.ROUTES`) or an allowlist.
    pub(super) fn constant_table(&self, fr: &Frame, n: Node<'t>) -> bool {
        let t = self.text(n);
        let caps = t.rsplit(['.', ':']).next().is_some_and(|last| {
            !last.is_empty()
                && last.chars().any(|c| c.is_ascii_uppercase())
                && last
                    .chars()
                    .all(|c| c.is_ascii_uppercase() || c == '_' || c.is_ascii_digit())
        });
        caps || self.allowlist(fr, n)
    }

    /// [`Self::allowlist`] of an assigned value (the variable then is one).
    pub(super) fn const_collection_of(&self, n: Node<'t>) -> bool {
        self.const_collection(n, 0)
    }

    fn const_collection(&self, n: Node<'t>, depth: usize) -> bool {
        let n = unwrap(n);
        if depth > 4 {
            return false;
        }
        let literal =
            |x: Node<'t>| literal_key(x, self.src).is_some() || self.const_collection(x, depth + 1);
        let constant = |x: Node<'t>| match x.kind() {
            "array_element_initializer" | "pair" => {
                let mut cursor = x.walk();
                let parts: Vec<Node<'t>> = x.named_children(&mut cursor).collect();
                !parts.is_empty()
                    && parts.into_iter().all(|p| {
                        literal(p) || matches!(p.kind(), "property_identifier" | "hash_key_symbol")
                    })
            }
            _ => literal(x),
        };
        match n.kind() {
            "list"
            | "set"
            | "tuple"
            | "array"
            | "array_creation_expression"
            | "array_initializer"
            | "dictionary"
            | "hash"
            | "object" => {
                let mut cursor = n.walk();
                let kids: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
                !kids.is_empty() && kids.into_iter().all(constant)
            }
            "method_invocation" | "call" | "call_expression" | "object_creation_expression" => {
                let parts = call_parts(self.lang, n, self.src);
                // Ruby's `{...}.freeze`.
                if parts.name == "freeze"
                    && let Some(r) = parts.receiver
                {
                    return self.const_collection(r, depth + 1);
                }
                matches!(
                    parts.name.as_str(),
                    "of" | "asList"
                        | "copyOf"
                        | "set"
                        | "frozenset"
                        | "HashSet"
                        | "Set"
                        | "newHashSet"
                ) && !parts.args.is_empty()
                    && parts.args.iter().all(|a| constant(*a))
            }
            _ => false,
        }
    }
}
