//! The PHP adapter (`LANGUAGE_PHP`: files with HTML around `<?php`):
//! node kinds and the language constructs that act as calls — `echo`,
//! `print`, `include`/`require`, backticks, casts (`(int) $x`), and the
//! request body `file_get_contents('php://input')` (the call `php://input`)
//! — so that the spec can name them as sources, sinks and sanitizers like
//! functions.

use agent_syntax::tree_sitter::Node;

use super::lang::{CallParts, Lang, Role::*, arg_nodes, squash};

pub(super) const PHP: Lang = Lang {
    name: "php",
    params_field: "parameters",
    body_field: "body",
    table: &[
        ("variable_name", Ident),
        ("member_access_expression", Member),
        ("nullsafe_member_access_expression", Member),
        ("subscript_expression", Subscript),
        ("function_call_expression", Call),
        ("member_call_expression", Call),
        ("nullsafe_member_call_expression", Call),
        ("scoped_call_expression", Call),
        ("cast_expression", Call),
        ("echo_statement", Call),
        ("print_intrinsic", Call),
        ("include_expression", Call),
        ("include_once_expression", Call),
        ("require_expression", Call),
        ("require_once_expression", Call),
        ("shell_command_expression", Call),
        ("object_creation_expression", New),
        ("assignment_expression", Assign("left", "right")),
        ("reference_assignment_expression", Assign("left", "right")),
        ("augmented_assignment_expression", AugAssign),
        ("function_definition", Function),
        ("method_declaration", Function),
        ("anonymous_function", Skip),
        ("arrow_function", Skip),
        ("comment", Skip),
        ("php_tag", Skip),
        ("text", Skip),
        ("text_interpolation", Skip),
        ("namespace_use_declaration", Skip),
        ("name", Skip),
        ("string_content", Skip),
        ("string_value", Skip),
        ("unary_op_expression", Compare),
        ("binary_expression", Binary),
        ("return_statement", Return),
        ("if_statement", If),
        ("conditional_expression", Ternary),
        ("else_clause", Branch),
        ("else_if_clause", Branch),
        ("switch_statement", Branch),
        ("match_expression", Branch),
        ("while_statement", Branch),
        ("do_statement", Branch),
        ("for_statement", Branch),
        ("foreach_statement", Branch),
        ("try_statement", Branch),
        ("catch_clause", Branch),
    ],
};

/// The language constructs read as calls: their callee name.
fn construct(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "echo_statement" => "echo",
        "print_intrinsic" => "print",
        "include_expression" => "include",
        "include_once_expression" => "include_once",
        "require_expression" => "require",
        "require_once_expression" => "require_once",
        "shell_command_expression" => "`",
        _ => return None,
    })
}

/// Reads a PHP call-like node; `None` for a plain function call (the
/// language-neutral reading applies).
pub(super) fn call_parts<'t>(node: Node<'t>, src: &str) -> Option<CallParts<'t>> {
    let field = |f: &str| node.child_by_field_name(f);
    let kind = node.kind();
    if let Some(name) = construct(kind) {
        let mut cursor = node.walk();
        let args: Vec<Node<'t>> = node
            .named_children(&mut cursor)
            .filter(|c| c.kind() != "comment")
            .collect();
        return Some(CallParts {
            callee: name.to_string(),
            receiver: None,
            positional: args.len(),
            args,
            name: name.to_string(),
        });
    }
    match kind {
        // Reading the request body: `file_get_contents('php://input')` is
        // the call `php://input` (a source, not a file or a request).
        "function_call_expression" => {
            let f = field("function").map(|f| squash(f, src))?;
            let (args, positional) = arg_nodes(field("arguments"));
            let first = args
                .first()
                .map(|a| src[a.byte_range()].trim().to_string())?;
            let body = matches!(f.as_str(), "file_get_contents" | "fopen")
                && first.trim_matches(['"', '\'']).starts_with("php://input");
            body.then(|| CallParts {
                callee: "php://input".to_string(),
                receiver: None,
                args,
                positional,
                name: "php://input".to_string(),
            })
        }
        "cast_expression" => {
            let ty = field("type").map(|t| squash(t, src)).unwrap_or_default();
            let callee = format!("({})", ty.to_ascii_lowercase());
            let args: Vec<Node<'t>> = field("value").into_iter().collect();
            Some(CallParts {
                callee: callee.clone(),
                receiver: None,
                positional: args.len(),
                args,
                name: callee,
            })
        }
        "member_call_expression" | "nullsafe_member_call_expression" | "scoped_call_expression" => {
            let receiver = field("object").or_else(|| field("scope"));
            let name = field("name").map(|n| squash(n, src)).unwrap_or_default();
            let callee = match receiver {
                Some(r) => format!("{}.{name}", squash(r, src)),
                None => name.clone(),
            };
            let (args, positional) = arg_nodes(field("arguments"));
            Some(CallParts {
                callee,
                receiver,
                args,
                positional,
                name,
            })
        }
        "object_creation_expression" => {
            let mut cursor = node.walk();
            let kids: Vec<Node<'t>> = node.named_children(&mut cursor).collect();
            let ty = kids
                .iter()
                .find(|k| matches!(k.kind(), "name" | "qualified_name"))
                .map(|t| squash(*t, src))
                .unwrap_or_default();
            let ty = ty.rsplit('\\').next().unwrap_or(&ty).to_string();
            let list = kids.iter().find(|k| k.kind() == "arguments").copied();
            let (args, positional) = arg_nodes(list);
            Some(CallParts {
                callee: format!("new {ty}"),
                receiver: None,
                args,
                positional,
                name: ty,
            })
        }
        _ => None,
    }
}
