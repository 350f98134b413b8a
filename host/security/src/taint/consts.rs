//! Constants and branches: integer, string and character constants
//! folded through variables and arithmetic, so that a branch whose
//! condition is constant (`if ((7 * 18) + num > 200)`, `switch` on a
//! constant character) is walked alone; allowlist guards (`x in ALLOWED`,
//! `x == "a"`, `ALLOWED.contains(x)`) clean the guarded variable.

use agent_syntax::tree_sitter::Node;

use super::analyze::{Analyzer, Frame};
use super::lang::squash;
use super::value::T;

/// A constant value.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Const {
    /// An integer.
    Int(i64),
    /// A string.
    Str(String),
    /// A character.
    Char(char),
}

const STRING_KINDS: [&str; 7] = [
    "string",
    "encapsed_string",
    "string_literal",
    "interpreted_string_literal",
    "raw_string_literal",
    "simple_symbol",
    "character_literal",
];

/// The text of a literal key or index (`"k"`, `'k'`, `:k`, `0`), unquoted.
pub fn literal_key(n: Node<'_>, src: &str) -> Option<String> {
    let n = unwrap(n);
    let text = &src[n.byte_range()];
    let kind = n.kind();
    if kind.contains("integer") || kind == "number" || kind == "int_literal" {
        return Some(text.to_string());
    }
    if STRING_KINDS.contains(&kind) && !has_interpolation(n) {
        let t = text.trim_start_matches(':');
        let t = t.trim_start_matches(['b', 'r', 'u', 'f', 'B', 'R', 'U', 'F']);
        return Some(t.trim_matches(['"', '\'', '`']).to_string());
    }
    None
}

fn has_interpolation(n: Node<'_>) -> bool {
    let mut cursor = n.walk();
    n.named_children(&mut cursor).any(|c| {
        matches!(
            c.kind(),
            "interpolation"
                | "template_substitution"
                | "variable_name"
                | "subscript_expression"
                | "member_access_expression"
                | "member_call_expression"
                | "dynamic_variable_name"
        )
    })
}

pub(super) fn unwrap(mut n: Node<'_>) -> Node<'_> {
    while matches!(
        n.kind(),
        "parenthesized_expression" | "argument" | "expression_list"
    ) && n.named_child_count() == 1
    {
        match n.named_child(0) {
            Some(c) => n = c,
            None => break,
        }
    }
    n
}

impl<'t> Analyzer<'_, 't> {
    /// The constant value of `n`, when it has one.
    pub(super) fn const_of(&self, fr: &Frame, n: Node<'t>) -> Option<Const> {
        self.const_at(fr, n, 0)
    }

    /// [`Self::const_of`] at nesting `depth` (deep expressions are not folded).
    fn const_at(&self, fr: &Frame, n: Node<'t>, depth: usize) -> Option<Const> {
        if depth > 32 {
            return None;
        }
        let n = unwrap(n);
        let kind = n.kind();
        let text = self.text(n);
        if kind == "character_literal" {
            return text.trim_matches('\'').chars().next().map(Const::Char);
        }
        if kind.contains("integer") || kind == "number" || kind == "int_literal" {
            return text.replace('_', "").parse().ok().map(Const::Int);
        }
        if STRING_KINDS.contains(&kind) {
            return literal_key(n, self.src).map(Const::Str);
        }
        if matches!(kind, "true" | "True") {
            return Some(Const::Int(1));
        }
        if matches!(kind, "false" | "False" | "none" | "None" | "null" | "nil") {
            return Some(Const::Int(0));
        }
        if matches!(kind, "identifier" | "field_access" | "attribute") {
            return fr.consts.get(&squash(n, self.src)).cloned();
        }
        if matches!(kind, "binary_expression" | "binary_operator") {
            let l = self.const_at(fr, n.child_by_field_name("left")?, depth + 1)?;
            let r = self.const_at(fr, n.child_by_field_name("right")?, depth + 1)?;
            let op = self.text(n.child_by_field_name("operator")?).trim();
            return match (l, r) {
                (Const::Int(a), Const::Int(b)) => Some(Const::Int(match op {
                    "+" => a.checked_add(b)?,
                    "-" => a.checked_sub(b)?,
                    "*" => a.checked_mul(b)?,
                    "/" if b != 0 => a.checked_div(b)?,
                    "%" if b != 0 => a.checked_rem(b)?,
                    _ => return None,
                })),
                (Const::Str(a), Const::Str(b)) if op == "+" => Some(Const::Str(a + &b)),
                _ => None,
            };
        }
        if kind == "method_invocation" {
            let name = self.text(n.child_by_field_name("name")?);
            let obj = self.const_at(fr, n.child_by_field_name("object")?, depth + 1)?;
            let args = n.child_by_field_name("arguments")?;
            if name == "charAt"
                && let (Const::Str(s), Some(Const::Int(i))) =
                    (obj, args.named_child(0).and_then(|a| self.const_of(fr, a)))
            {
                return s.chars().nth(usize::try_from(i).ok()?).map(Const::Char);
            }
        }
        None
    }

    /// The constant truth of a condition, when it has one.
    pub(super) fn const_cond(&self, fr: &Frame, n: Node<'t>) -> Option<bool> {
        self.cond_at(fr, n, 0)
    }

    fn cond_at(&self, fr: &Frame, n: Node<'t>, depth: usize) -> Option<bool> {
        let n = unwrap(n);
        if depth > 16 {
            return None;
        }
        match n.kind() {
            "true" => return Some(true),
            "false" => return Some(false),
            _ => {}
        }
        // `if 0:`, `if DEBUG:` with `DEBUG = False`.
        if let Some(Const::Int(i)) = self.const_of(fr, n) {
            return Some(i != 0);
        }
        if matches!(n.kind(), "not_operator" | "unary_expression" | "unary")
            && n.child_by_field_name("operator")
                .is_none_or(|o| matches!(self.text(o).trim(), "!" | "not"))
        {
            let inner = n
                .child_by_field_name("argument")
                .or_else(|| n.child_by_field_name("operand"))?;
            return self.cond_at(fr, inner, depth + 1).map(|b| !b);
        }
        if let Some(op) = n
            .child_by_field_name("operator")
            .map(|o| self.text(o).trim())
            && matches!(op, "&&" | "||" | "and" | "or")
        {
            let l = self.cond_at(fr, n.child_by_field_name("left")?, depth + 1);
            let r = self.cond_at(fr, n.child_by_field_name("right")?, depth + 1);
            return match (op, l, r) {
                ("&&" | "and", Some(false), _) | ("&&" | "and", _, Some(false)) => Some(false),
                ("&&" | "and", Some(true), Some(true)) => Some(true),
                ("||" | "or", Some(true), _) | ("||" | "or", _, Some(true)) => Some(true),
                ("||" | "or", Some(false), Some(false)) => Some(false),
                _ => None,
            };
        }
        let op = self.text(n.child_by_field_name("operator")?).trim();
        let l = self.const_of(fr, n.child_by_field_name("left")?)?;
        let r = self.const_of(fr, n.child_by_field_name("right")?)?;
        match (l, r) {
            (Const::Int(a), Const::Int(b)) => Some(match op {
                ">" => a > b,
                "<" => a < b,
                ">=" => a >= b,
                "<=" => a <= b,
                "==" | "===" => a == b,
                "!=" | "!==" => a != b,
                _ => return None,
            }),
            _ => None,
        }
    }

    /// Whether a block ends by leaving (return, raise, throw, abort).
    pub(super) fn exits(&self, block: Node<'t>) -> bool {
        let leaves = |k: &str| {
            matches!(
                k,
                "return_statement"
                    | "raise_statement"
                    | "throw_statement"
                    | "continue_statement"
                    | "exit_statement"
                    | "return"
            )
        };
        // `if (bad) return ...;` without braces.
        if leaves(block.kind()) {
            return true;
        }
        let mut n = block;
        while let Some(last) =
            n.named_child(u32::try_from(n.named_child_count().saturating_sub(1)).unwrap_or(0))
        {
            if matches!(
                last.kind(),
                "return_statement"
                    | "raise_statement"
                    | "throw_statement"
                    | "continue_statement"
                    | "exit_statement"
                    | "return"
            ) {
                return true;
            }
            let t = self.text(last);
            if t.starts_with("abort(") || t.starts_with("sys.exit") || t.starts_with("exit(") {
                return true;
            }
            if last.named_child_count() == 0
                || !matches!(
                    last.kind(),
                    "block"
                        | "expression_statement"
                        | "statement_block"
                        | "body_statement"
                        | "statement_list"
                        | "compound_statement"
                        | "colon_block"
                )
            {
                return false;
            }
            n = last;
        }
        false
    }

    /// Java `switch` on a constant walks the matching case (and what falls
    /// through until a `break`); anything else walks every case weakly.
    pub(super) fn switch(&mut self, fr: &mut Frame, n: Node<'t>) -> T {
        let cond = n
            .child_by_field_name("condition")
            .or_else(|| n.child_by_field_name("value"));
        let value = cond.and_then(|c| self.const_of(fr, c));
        let body = n.child_by_field_name("body");
        if let (Some(v), Some(body)) = (value, body) {
            let mut cursor = body.walk();
            let groups: Vec<Node<'t>> = body
                .named_children(&mut cursor)
                .filter(|g| g.kind() == "switch_block_statement_group")
                .collect();
            let label_matches = |g: &Node<'t>, default: bool| {
                let mut c = g.walk();
                g.named_children(&mut c)
                    .filter(|l| l.kind() == "switch_label")
                    .any(|l| {
                        if default {
                            self.text(l).trim_start().starts_with("default")
                        } else {
                            l.named_child(0).and_then(|x| self.const_of(fr, x)).as_ref() == Some(&v)
                        }
                    })
            };
            let start = groups
                .iter()
                .position(|g| label_matches(g, false))
                .or_else(|| groups.iter().position(|g| label_matches(g, true)));
            if let Some(start) = start {
                'groups: for g in &groups[start..] {
                    let mut c = g.walk();
                    let stmts: Vec<Node<'t>> = g
                        .named_children(&mut c)
                        .filter(|s| s.kind() != "switch_label")
                        .collect();
                    for s in stmts {
                        if s.kind() == "break_statement" {
                            break 'groups;
                        }
                        self.eval(fr, s);
                    }
                }
                return None;
            }
        }
        fr.weak += 1;
        let t = self.children(fr, n);
        fr.weak -= 1;
        t
    }
}
