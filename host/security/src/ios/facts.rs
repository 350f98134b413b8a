//! The facts the iOS data-flow pass ([`super::flow`]) reasons over, read
//! from one Swift or Objective-C file with tree-sitter queries: scopes
//! (functions, initialisers, closures, methods), definitions (`let`/`var`,
//! assignments, deep-link parameters) and calls (method, receiver, first
//! argument, all arguments).

use std::time::{Duration, Instant};

use agent_syntax::{Bounds, Capture, QueryMatch};

/// Longest time the fact queries may take on one file (as a rule query).
const QUERY_TIME: Duration = Duration::from_secs(5);

/// Where a definition's value comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Origin {
    /// A `let`/`var` initialiser or an assignment.
    Value,
    /// A parameter carrying a URL opened from outside the app (a deep
    /// link: `application(_:open:options:)`, `scene(_:openURLContexts:)`,
    /// `application(_:continue:…)`, `.onOpenURL { url in … }`).
    DeepLink,
}

/// One definition of a name.
#[derive(Debug, Clone)]
pub(super) struct Def {
    /// The name defined.
    pub name: String,
    /// The value's code (string literals blanked, interpolations kept).
    pub value: String,
    /// Where the value comes from.
    pub origin: Origin,
    /// A declaration (`let`/`var`, a parameter), not an assignment.
    pub declared: bool,
    /// Byte offset of the definition.
    pub at: u32,
    /// 1-based line.
    pub line: u32,
    /// The innermost scope (byte range) it is visible in; `None`: a
    /// property of the file's types, visible everywhere.
    pub scope: Option<(u32, u32)>,
}

/// One method call.
#[derive(Debug, Clone)]
pub(super) struct Call {
    /// The receiver's code (`UserDefaults.standard`, `webView`).
    pub receiver: String,
    /// The method (`set`, `load`, `setObject`).
    pub method: String,
    /// The first argument's code.
    pub first: String,
    /// Every argument's code, labels included (`allowingReadAccessTo: x`).
    pub args: String,
    /// Byte offset of the call.
    pub at: u32,
    /// 1-based line and column.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
    /// 1-based end line and column.
    pub end: (u32, u32),
}

/// One assignment to a member (`prefs.javaScriptEnabled = true`).
#[derive(Debug, Clone)]
pub(super) struct MemberSet {
    /// The target's code.
    pub target: String,
    /// The value's code.
    pub value: String,
    /// Byte offset.
    pub at: u32,
    /// 1-based line.
    pub line: u32,
    /// 1-based column.
    pub column: u32,
}

/// Everything the pass needs from one file.
#[derive(Debug, Default)]
pub(super) struct Facts {
    pub scopes: Vec<(u32, u32)>,
    pub defs: Vec<Def>,
    pub calls: Vec<Call>,
    pub member_sets: Vec<MemberSet>,
    /// The types (classes, structs, extensions) of the file.
    pub types: Vec<(u32, u32)>,
}

impl Facts {
    /// The innermost type holding byte `at`.
    pub fn type_of(&self, at: u32) -> Option<(u32, u32)> {
        scope_of(&self.types, at)
    }
}

const SWIFT: &str = r#"
(class_declaration) @type
(function_declaration) @scope
(init_declaration) @scope
(lambda_literal) @scope
(computed_property) @scope
(property_declaration
  name: (pattern bound_identifier: (simple_identifier) @def.name)
  value: (_) @def.value) @def
(if_statement
  bound_identifier: (simple_identifier) @def.name
  "=" . condition: (_) @def.value) @def
(guard_statement
  bound_identifier: (simple_identifier) @def.name
  "=" . condition: (_) @def.value) @def
(assignment
  target: (directly_assignable_expression) @asg.target
  result: (_) @asg.value) @asg
(call_expression
  (navigation_expression
    target: (_) @call.recv
    suffix: (navigation_suffix suffix: (simple_identifier) @call.method))
  (call_suffix (value_arguments . (value_argument value: (_) @call.first)) @call.args)) @call
(function_declaration
  name: (simple_identifier) @link.fn
  (parameter external_name: (simple_identifier) @link.ext name: (simple_identifier) @link.name))
(call_expression
  (navigation_expression suffix: (navigation_suffix suffix: (simple_identifier) @lambda.method))
  (call_suffix (lambda_literal
    type: (lambda_function_type (lambda_function_type_parameters
      (lambda_parameter name: (simple_identifier) @lambda.name)))))
  (#eq? @lambda.method "onOpenURL"))
"#;

const OBJC: &str = r#"
(method_definition) @scope
(function_definition) @scope
(block_literal) @scope
(init_declarator declarator: (_) @def.name value: (_) @def.value) @def
(assignment_expression left: (_) @asg.target right: (_) @asg.value) @asg
(message_expression receiver: (_) @msg.recv method: (identifier) @msg.method) @msg
"#;

/// Reads the facts of `source` (`swift` or `objective-c`).
///
/// # Errors
/// The query failed on this file (too large, timed out).
pub(super) fn read(language: &str, source: &str) -> Result<Facts, String> {
    let query = match language {
        "swift" => SWIFT,
        "objective-c" => OBJC,
        _ => return Ok(Facts::default()),
    };
    let bounds = Bounds {
        deadline: Some(Instant::now() + QUERY_TIME),
        ..Bounds::default()
    };
    let matches =
        agent_syntax::query_bounded(language, source, query, &bounds).map_err(|e| e.to_string())?;
    let mut facts = Facts::default();
    for m in &matches {
        if let Some(c) = get(m, "scope") {
            facts.scopes.push((c.start_byte, c.end_byte));
        }
        if let Some(c) = get(m, "type") {
            facts.types.push((c.start_byte, c.end_byte));
        }
    }
    for m in &matches {
        add(&mut facts, m, language);
    }
    // An assignment to a name no `let`/`var` declares in an enclosing scope
    // sets a property of the type: visible from every method.
    let local: Vec<(String, Option<(u32, u32)>)> = facts
        .defs
        .iter()
        .filter(|d| d.declared && d.scope.is_some())
        .map(|d| (d.name.clone(), d.scope))
        .collect();
    for d in facts
        .defs
        .iter_mut()
        .filter(|d| !d.declared && d.scope.is_some())
    {
        let declared = local
            .iter()
            .any(|(n, s)| *n == d.name && s.is_some_and(|s| s.0 <= d.at && d.at < s.1));
        if !declared {
            d.scope = None;
        }
    }
    Ok(facts)
}

fn get<'m>(m: &'m QueryMatch, name: &str) -> Option<&'m Capture> {
    m.captures.iter().find(|c| c.name == name)
}

/// The innermost scope holding byte `at`.
fn scope_of(scopes: &[(u32, u32)], at: u32) -> Option<(u32, u32)> {
    scopes
        .iter()
        .filter(|s| s.0 <= at && at < s.1)
        .min_by_key(|s| s.1 - s.0)
        .copied()
}

fn add(facts: &mut Facts, m: &QueryMatch, language: &str) {
    if let (Some(d), Some(name), Some(value)) =
        (get(m, "def"), get(m, "def.name"), get(m, "def.value"))
    {
        let name = last_identifier(&name.text);
        // The declaration holds its own initialiser: the def is visible
        // in the scope around it.
        let scope = scope_of(&facts.scopes, d.start_byte);
        push_def(
            facts,
            name,
            &value.text,
            (Origin::Value, true),
            d,
            scope,
            language,
        );
        return;
    }
    if let (Some(a), Some(target), Some(value)) =
        (get(m, "asg"), get(m, "asg.target"), get(m, "asg.value"))
    {
        let t = target.text.trim();
        let simple = t
            .strip_prefix("self.")
            .unwrap_or(t)
            .chars()
            .all(|c| c.is_alphanumeric() || c == '_');
        if simple {
            let self_member = t.starts_with("self.");
            let scope = if self_member {
                None
            } else {
                scope_of(&facts.scopes, a.start_byte)
            };
            let name = last_identifier(t);
            push_def(
                facts,
                name,
                &value.text,
                (Origin::Value, false),
                a,
                scope,
                language,
            );
        } else {
            facts.member_sets.push(MemberSet {
                target: t.to_string(),
                value: code(&value.text, language),
                at: a.start_byte,
                line: a.start_line,
                column: a.start_column,
            });
        }
        return;
    }
    if let (Some(c), Some(recv), Some(method), Some(first), Some(args)) = (
        get(m, "call"),
        get(m, "call.recv"),
        get(m, "call.method"),
        get(m, "call.first"),
        get(m, "call.args"),
    ) {
        facts.calls.push(Call {
            receiver: code(&recv.text, language),
            method: method.text.clone(),
            first: code(&first.text, language),
            args: code(&args.text, language),
            at: c.start_byte,
            line: c.start_line,
            column: c.start_column,
            end: (c.end_line, c.end_column),
        });
        return;
    }
    if let (Some(c), Some(recv), Some(method)) =
        (get(m, "msg"), get(m, "msg.recv"), get(m, "msg.method"))
    {
        let text = code(&c.text, language);
        let first = objc_first_argument(&text, &method.text).unwrap_or_default();
        facts.calls.push(Call {
            receiver: code(&recv.text, language),
            method: method.text.clone(),
            first,
            args: text,
            at: c.start_byte,
            line: c.start_line,
            column: c.start_column,
            end: (c.end_line, c.end_column),
        });
        return;
    }
    if let (Some(f), Some(ext), Some(name)) =
        (get(m, "link.fn"), get(m, "link.ext"), get(m, "link.name"))
    {
        let deep_link = matches!(
            (f.text.as_str(), ext.text.as_str()),
            ("application", "open" | "continue") | ("scene", "openURLContexts" | "continue")
        );
        if deep_link {
            let scope = scope_of(&facts.scopes, name.start_byte);
            push_def(
                facts,
                name.text.clone(),
                "",
                (Origin::DeepLink, true),
                name,
                scope,
                language,
            );
        }
        return;
    }
    if let Some(name) = get(m, "lambda.name") {
        let scope = scope_of(&facts.scopes, name.start_byte);
        push_def(
            facts,
            name.text.clone(),
            "",
            (Origin::DeepLink, true),
            name,
            scope,
            language,
        );
    }
}

fn push_def(
    facts: &mut Facts,
    name: String,
    value: &str,
    (origin, declared): (Origin, bool),
    at: &Capture,
    scope: Option<(u32, u32)>,
    language: &str,
) {
    if name.is_empty() {
        return;
    }
    facts.defs.push(Def {
        name,
        value: code(value, language),
        origin,
        declared,
        at: at.start_byte,
        line: at.start_line,
        scope,
    });
}

/// The last identifier of `text` (`*token` → `token`, `self.x` → `x`).
fn last_identifier(text: &str) -> String {
    identifiers(text)
        .last()
        .map(|s| (*s).to_string())
        .unwrap_or_default()
}

/// The identifiers of code (labels `name:` excluded), in order.
pub(super) fn identifiers(code: &str) -> Vec<&str> {
    let bytes = code.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let c = bytes[i];
        if c.is_ascii_alphabetic() || c == b'_' {
            let start = i;
            while i < bytes.len() && (bytes[i].is_ascii_alphanumeric() || bytes[i] == b'_') {
                i += 1;
            }
            let label = code[i..].trim_start().starts_with(':')
                && !code[i..].trim_start().starts_with("::");
            if !label || code[..start].trim_end().ends_with('?') {
                out.push(&code[start..i]);
            }
        } else if c.is_ascii_digit() {
            while i < bytes.len() && bytes[i].is_ascii_alphanumeric() {
                i += 1;
            }
        } else {
            i += 1;
        }
    }
    out
}

/// The names of variables `code` uses: its identifiers except members
/// (`a.b` uses `a`; `self.b` uses `b`, a property).
pub(super) fn variables(code: &str) -> Vec<&str> {
    let mut out = identifiers(code);
    let bytes = code.as_bytes();
    out.retain(|id| {
        // Keep a name when one of its occurrences is not a member.
        code.match_indices(id).any(|(i, _)| {
            let whole = !bytes
                .get(i + id.len())
                .is_some_and(|b| b.is_ascii_alphanumeric() || *b == b'_')
                && !(i > 0 && (bytes[i - 1].is_ascii_alphanumeric() || bytes[i - 1] == b'_'));
            let member = i > 0 && bytes[i - 1] == b'.' && !code[..i].ends_with("self.");
            whole && !member
        })
    });
    out
}

/// `text` with the contents of string literals blanked (quotes kept,
/// Swift interpolations `\(…)` kept as code), so names inside text
/// (`"Enter your password"`) are not read as code.
pub(super) fn code(text: &str, language: &str) -> String {
    let swift = language == "swift";
    let mut out = String::with_capacity(text.len());
    let mut chars = text.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '"' {
            out.push(c);
            continue;
        }
        out.push('"');
        // Inside a literal: up to the closing quote.
        while let Some(c) = chars.next() {
            match c {
                '"' => break,
                '\\' if swift && chars.peek() == Some(&'(') => {
                    chars.next();
                    out.push_str("\\(");
                    let mut depth = 1;
                    for c in chars.by_ref() {
                        match c {
                            '(' => depth += 1,
                            ')' => depth -= 1,
                            _ => {}
                        }
                        if depth == 0 {
                            break;
                        }
                        out.push(c);
                    }
                    out.push(')');
                }
                '\\' => {
                    chars.next();
                    out.push(' ');
                }
                _ => out.push(' '),
            }
        }
        out.push('"');
    }
    out
}

/// The first argument of an Objective-C message (`[d setObject:t
/// forKey:@"k"]` → `t`).
fn objc_first_argument(text: &str, method: &str) -> Option<String> {
    let start = text.find(&format!("{method}:"))? + method.len() + 1;
    let rest = &text[start..];
    let mut depth = 0i32;
    let mut end = rest.len();
    for (i, c) in rest.char_indices() {
        match c {
            '[' | '(' | '{' => depth += 1,
            ']' | ')' | '}' if depth == 0 => {
                end = i;
                break;
            }
            ']' | ')' | '}' => depth -= 1,
            ' ' | '\t' | '\n' if depth == 0 => {
                // A space before the next `label:` ends the argument.
                let tail = rest[i..].trim_start();
                let label: String = tail
                    .chars()
                    .take_while(|c| c.is_alphanumeric() || *c == '_')
                    .collect();
                if !label.is_empty() && tail[label.len()..].starts_with(':') {
                    end = i;
                    break;
                }
            }
            _ => {}
        }
    }
    Some(rest[..end].trim().to_string())
}
