//! Language adapters: which tree-sitter node kinds play which part in the
//! dataflow (names, member access, calls, assignments, functions,
//! branches), and how a call's callee, receiver and arguments are read.

use agent_syntax::tree_sitter::Node;

/// What a node does for the dataflow.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// A variable name.
    Ident,
    /// `a.b` (the whole path is looked up, then the base).
    Member,
    /// `a[k]`.
    Subscript,
    /// A call.
    Call,
    /// `new T(...)`.
    New,
    /// `lhs = rhs` (fields of the adapter's table).
    Assign(&'static str, &'static str),
    /// `lhs += rhs`.
    AugAssign,
    /// A function or method: analysed on its own, skipped inside another.
    Function,
    /// Never tainted, not entered (lambdas, classes, comments, imports).
    Skip,
    /// A comparison or boolean test: its value is clean.
    Compare,
    /// A binary operator node: a comparison when its operator is one.
    Binary,
    /// `return e`.
    Return,
    /// `if`: condition, consequence, alternative.
    If,
    /// `c ? a : b`.
    Ternary,
    /// `switch`.
    Switch,
    /// A loop or `try`: entered, with weak updates.
    Branch,
    /// `for x in e` (fields: target, iterable).
    ForEach(&'static str, &'static str),
    /// Anything else: the union of its children.
    Other,
}

/// One language's node kinds.
pub struct Lang {
    /// The spec language.
    pub name: &'static str,
    pub(super) table: &'static [(&'static str, Role)],
    /// Field of a function's parameter list.
    pub params_field: &'static str,
    /// Field of a function's body.
    pub body_field: &'static str,
}

impl Lang {
    /// The role of `kind`.
    pub fn role(&self, kind: &str) -> Role {
        self.table
            .iter()
            .find(|(k, _)| *k == kind)
            .map_or(Role::Other, |(_, r)| *r)
    }
}

use Role::*;

const PYTHON: Lang = Lang {
    name: "python",
    params_field: "parameters",
    body_field: "body",
    table: &[
        ("identifier", Ident),
        ("attribute", Member),
        ("subscript", Subscript),
        ("call", Call),
        ("assignment", Assign("left", "right")),
        ("augmented_assignment", AugAssign),
        ("named_expression", Assign("name", "value")),
        ("function_definition", Function),
        ("lambda", Skip),
        ("class_definition", Other),
        ("comment", Skip),
        ("import_statement", Skip),
        ("import_from_statement", Skip),
        ("decorator", Skip),
        ("comparison_operator", Compare),
        ("not_operator", Compare),
        ("return_statement", Return),
        ("if_statement", If),
        ("conditional_expression", Ternary),
        ("match_statement", Branch),
        ("while_statement", Branch),
        ("try_statement", Branch),
        ("with_statement", Branch),
        ("elif_clause", Branch),
        ("else_clause", Branch),
        ("except_clause", Branch),
        ("for_statement", ForEach("left", "right")),
        ("for_in_clause", ForEach("left", "right")),
        ("as_pattern", Assign("alias", "")),
        ("string_content", Skip),
    ],
};

const JAVA: Lang = Lang {
    name: "java",
    params_field: "parameters",
    body_field: "body",
    table: &[
        ("identifier", Ident),
        ("field_access", Member),
        ("array_access", Subscript),
        ("method_invocation", Call),
        ("object_creation_expression", New),
        ("variable_declarator", Assign("name", "value")),
        ("assignment_expression", Assign("left", "right")),
        ("method_declaration", Function),
        ("constructor_declaration", Function),
        ("lambda_expression", Skip),
        ("line_comment", Skip),
        ("block_comment", Skip),
        ("import_declaration", Skip),
        ("package_declaration", Skip),
        ("annotation", Skip),
        ("marker_annotation", Skip),
        ("instanceof_expression", Compare),
        ("unary_expression", Compare),
        ("binary_expression", Binary),
        ("return_statement", Return),
        ("if_statement", If),
        ("ternary_expression", Ternary),
        ("switch_expression", Switch),
        ("switch_statement", Switch),
        ("while_statement", Branch),
        ("do_statement", Branch),
        ("for_statement", Branch),
        ("try_statement", Branch),
        ("try_with_resources_statement", Branch),
        ("catch_clause", Branch),
        ("enhanced_for_statement", ForEach("name", "value")),
    ],
};

const JAVASCRIPT: Lang = Lang {
    name: "javascript",
    params_field: "parameters",
    body_field: "body",
    table: &[
        ("identifier", Ident),
        ("shorthand_property_identifier", Ident),
        ("member_expression", Member),
        ("subscript_expression", Subscript),
        ("call_expression", Call),
        ("new_expression", New),
        ("variable_declarator", Assign("name", "value")),
        ("assignment_expression", Assign("left", "right")),
        ("augmented_assignment_expression", AugAssign),
        ("function_declaration", Function),
        ("generator_function_declaration", Function),
        ("function_expression", Function),
        ("function", Function),
        ("arrow_function", Function),
        ("method_definition", Function),
        ("comment", Skip),
        ("import_statement", Skip),
        ("unary_expression", Compare),
        ("binary_expression", Binary),
        ("return_statement", Return),
        ("if_statement", If),
        ("ternary_expression", Ternary),
        ("switch_statement", Switch),
        ("while_statement", Branch),
        ("do_statement", Branch),
        ("for_statement", Branch),
        ("try_statement", Branch),
        ("catch_clause", Branch),
        ("for_in_statement", ForEach("left", "right")),
        ("string_fragment", Skip),
        ("type_annotation", Skip),
    ],
};

const GO: Lang = Lang {
    name: "go",
    params_field: "parameters",
    body_field: "body",
    table: &[
        ("identifier", Ident),
        ("selector_expression", Member),
        ("index_expression", Subscript),
        ("call_expression", Call),
        ("short_var_declaration", Assign("left", "right")),
        ("assignment_statement", Assign("left", "right")),
        ("var_spec", Assign("name", "value")),
        ("function_declaration", Function),
        ("method_declaration", Function),
        ("func_literal", Function),
        ("comment", Skip),
        ("import_declaration", Skip),
        ("package_clause", Skip),
        ("unary_expression", Other),
        ("binary_expression", Binary),
        ("return_statement", Return),
        ("if_statement", If),
        ("expression_switch_statement", Switch),
        ("type_switch_statement", Branch),
        ("select_statement", Branch),
        ("for_statement", Branch),
        ("range_clause", ForEach("left", "right")),
        ("interpreted_string_literal_content", Skip),
        ("raw_string_literal_content", Skip),
    ],
};

const RUBY: Lang = Lang {
    name: "ruby",
    params_field: "parameters",
    body_field: "body",
    table: &[
        ("identifier", Ident),
        ("instance_variable", Ident),
        ("constant", Ident),
        ("element_reference", Subscript),
        ("call", Call),
        ("assignment", Assign("left", "right")),
        ("operator_assignment", AugAssign),
        ("method", Function),
        ("singleton_method", Function),
        ("lambda", Skip),
        ("comment", Skip),
        ("binary", Binary),
        ("unary", Compare),
        ("return", Return),
        ("if", If),
        ("unless", If),
        ("if_modifier", If),
        ("unless_modifier", If),
        ("conditional", Ternary),
        ("case", Branch),
        ("when", Branch),
        ("while", Branch),
        ("until", Branch),
        ("begin", Branch),
        ("rescue", Branch),
        ("else", Branch),
        ("elsif", Branch),
        ("for", ForEach("pattern", "value")),
        ("string_content", Skip),
    ],
};

/// The adapter of a spec language.
pub fn adapter(name: &str) -> Option<&'static Lang> {
    Some(match name {
        "python" => &PYTHON,
        "java" => &JAVA,
        "javascript" => &JAVASCRIPT,
        "go" => &GO,
        "ruby" => &RUBY,
        "php" => &super::lang_php::PHP,
        _ => return None,
    })
}

/// Comparison and boolean operators: their result is clean.
pub fn is_comparison(op: &str) -> bool {
    matches!(
        op,
        "==" | "!="
            | "==="
            | "!=="
            | "<"
            | ">"
            | "<="
            | ">="
            | "&&"
            | "||"
            | "and"
            | "or"
            | "instanceof"
            | "in"
            | "=~"
            | "!~"
            | "<=>"
    )
}

/// A call's parts.
pub struct CallParts<'t> {
    /// The callee as text, spaces removed (`cursor.execute`, `new File`).
    pub callee: String,
    /// The receiver of a method call.
    pub receiver: Option<Node<'t>>,
    /// Positional arguments, in order, then keyword arguments' values.
    pub args: Vec<Node<'t>>,
    /// How many of `args` are positional.
    pub positional: usize,
    /// The method name (last segment).
    pub name: String,
}

/// Text of `node`, whitespace removed; PHP's `->` and `?->` read as `.`
/// (`$db->query` is `$db.query`, as the specs write paths).
pub fn squash(node: Node<'_>, src: &str) -> String {
    let s: String = src[node.byte_range()]
        .chars()
        .filter(|c| !c.is_whitespace())
        .collect();
    if s.contains("->") {
        s.replace("?->", ".").replace("->", ".")
    } else {
        s
    }
}

pub(super) fn arg_nodes<'t>(list: Option<Node<'t>>) -> (Vec<Node<'t>>, usize) {
    let Some(list) = list else {
        return (Vec::new(), 0);
    };
    // Python's `f(x for x in xs)`: the generator is the one argument.
    if list.kind() == "generator_expression" {
        return (vec![list], 1);
    }
    let mut cursor = list.walk();
    let mut out = Vec::new();
    let mut keywords = Vec::new();
    for c in list.named_children(&mut cursor) {
        match c.kind() {
            "comment" | "line_comment" | "block_comment" => {}
            "keyword_argument" | "pair" => {
                keywords.push(c.child_by_field_name("value").unwrap_or(c))
            }
            _ => out.push(c),
        }
    }
    let positional = out.len();
    out.extend(keywords);
    (out, positional)
}

/// Reads a call (or `new`) node of `lang`.
pub fn call_parts<'t>(lang: &Lang, node: Node<'t>, src: &str) -> CallParts<'t> {
    if lang.name == "php"
        && let Some(parts) = super::lang_php::call_parts(node, src)
    {
        return parts;
    }
    let field = |n: Node<'t>, f: &str| n.child_by_field_name(f);
    let (callee_node, receiver, name_node, args) = match (lang.name, node.kind()) {
        ("java", "method_invocation") => (
            None,
            field(node, "object"),
            field(node, "name"),
            field(node, "arguments"),
        ),
        ("ruby", _) => (
            None,
            field(node, "receiver"),
            field(node, "method"),
            field(node, "arguments"),
        ),
        (_, "object_creation_expression") => {
            let ty = field(node, "type")
                .map(|t| squash(t, src))
                .unwrap_or_default();
            let (args, positional) = arg_nodes(field(node, "arguments"));
            return CallParts {
                callee: format!("new {}", type_name(&ty)),
                receiver: None,
                name: type_name(&ty).to_string(),
                args,
                positional,
            };
        }
        (_, "new_expression") => {
            let ty = field(node, "constructor")
                .map(|t| squash(t, src))
                .unwrap_or_default();
            let (args, positional) = arg_nodes(field(node, "arguments"));
            return CallParts {
                callee: format!("new {}", type_name(&ty)),
                receiver: None,
                name: type_name(&ty).to_string(),
                args,
                positional,
            };
        }
        _ => {
            let f = field(node, "function");
            let (recv, name) = match f {
                Some(f) if matches!(f.kind(), "attribute" | "member_expression") => (
                    field(f, "object"),
                    field(f, "attribute").or_else(|| field(f, "property")),
                ),
                Some(f) if f.kind() == "selector_expression" => {
                    (field(f, "operand"), field(f, "field"))
                }
                Some(f) => (None, Some(f)),
                None => (None, None),
            };
            (f, recv, name, field(node, "arguments"))
        }
    };
    let name = name_node.map(|n| squash(n, src)).unwrap_or_default();
    let callee = match (callee_node, receiver) {
        (Some(c), _) => squash(c, src),
        (None, Some(r)) => format!("{}.{name}", squash(r, src)),
        (None, None) => name.clone(),
    };
    let (args, positional) = arg_nodes(args);
    CallParts {
        callee,
        receiver,
        args,
        positional,
        name,
    }
}

/// `java.util.ArrayList<String>` → `ArrayList`.
fn type_name(ty: &str) -> &str {
    let ty = ty.split('<').next().unwrap_or(ty);
    ty.rsplit('.').next().unwrap_or(ty)
}

/// The names a function declares as parameters, in order, each with the
/// parameter node (for annotations).
pub fn params<'t>(lang: &Lang, func: Node<'t>, src: &str) -> Vec<(String, Node<'t>)> {
    let Some(list) = func.child_by_field_name(lang.params_field) else {
        return Vec::new();
    };
    let mut out = Vec::new();
    let mut cursor = list.walk();
    for p in list.named_children(&mut cursor) {
        if p.kind() == "identifier" {
            out.push((squash(p, src), p));
            continue;
        }
        let mut c2 = p.walk();
        let names: Vec<Node<'t>> = p.children_by_field_name("name", &mut c2).collect();
        if !names.is_empty() {
            for n in names {
                out.push((squash(n, src), p));
            }
            continue;
        }
        if let Some(n) = p
            .child_by_field_name("pattern")
            .or_else(|| p.child_by_field_name("left"))
            .or_else(|| first_ident(p))
        {
            out.push((squash(n, src), p));
        }
    }
    out
}

fn first_ident<'t>(n: Node<'t>) -> Option<Node<'t>> {
    if n.kind() == "identifier" {
        return Some(n);
    }
    let mut cursor = n.walk();
    let children: Vec<Node<'t>> = n.named_children(&mut cursor).collect();
    children.into_iter().find_map(first_ident)
}

/// A function's name, when it has one.
pub fn function_name(func: Node<'_>, src: &str) -> Option<String> {
    func.child_by_field_name("name").map(|n| squash(n, src))
}
