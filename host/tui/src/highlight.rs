//! Syntax highlighting of code blocks with the bundled tree-sitter grammars
//! (agent-syntax): one small query per language captures keywords, strings,
//! comments, numbers, functions, types and constants.

use ratatui::text::{Line, Span};

use crate::theme::{Role, Theme};

const RUST: &str = r#"
["fn" "let" "pub" "use" "mod" "struct" "enum" "impl" "trait" "for" "while" "loop" "if" "else" "match" "return" "in" "as" "where" "const" "static" "async" "await" "move" "dyn" "unsafe" "break" "continue" "type"] @keyword
(mutable_specifier) @keyword
(self) @keyword
(primitive_type) @type
(type_identifier) @type
(function_item name: (identifier) @function)
(call_expression function: (identifier) @function)
(macro_invocation macro: (identifier) @function)
(integer_literal) @number
(float_literal) @number
(boolean_literal) @constant
(string_literal) @string
(raw_string_literal) @string
(char_literal) @string
(line_comment) @comment
(block_comment) @comment
"#;

const PYTHON: &str = r#"
["def" "class" "return" "if" "elif" "else" "for" "while" "in" "import" "from" "as" "with" "try" "except" "finally" "raise" "pass" "lambda" "yield" "not" "and" "or" "is" "async" "await" "break" "continue" "global"] @keyword
(function_definition name: (identifier) @function)
(call function: (identifier) @function)
(class_definition name: (identifier) @type)
(integer) @number
(float) @number
(true) @constant
(false) @constant
(none) @constant
(string) @string
(comment) @comment
"#;

const JAVASCRIPT: &str = r#"
["function" "return" "if" "else" "for" "while" "const" "let" "var" "new" "class" "extends" "import" "from" "export" "async" "await" "of" "in" "throw" "try" "catch"] @keyword
(function_declaration name: (identifier) @function)
(call_expression function: (identifier) @function)
(number) @number
(true) @constant
(false) @constant
(null) @constant
(string) @string
(template_string) @string
(comment) @comment
"#;

const TYPESCRIPT_EXTRA: &str = r#"
(type_identifier) @type
(predefined_type) @type
"#;

const GO: &str = r#"
["func" "package" "import" "return" "if" "else" "for" "range" "var" "const" "type" "struct" "interface" "go" "defer" "map" "chan" "switch" "case" "default"] @keyword
(function_declaration name: (identifier) @function)
(call_expression function: (identifier) @function)
(type_identifier) @type
(int_literal) @number
(float_literal) @number
(true) @constant
(false) @constant
(nil) @constant
(interpreted_string_literal) @string
(raw_string_literal) @string
(comment) @comment
"#;

const C: &str = r#"
["return" "if" "else" "for" "while" "struct" "typedef" "static" "const" "switch" "case"] @keyword
(primitive_type) @type
(type_identifier) @type
(function_declarator declarator: (identifier) @function)
(call_expression function: (identifier) @function)
(number_literal) @number
(string_literal) @string
(char_literal) @string
(comment) @comment
"#;

const JAVA: &str = r#"
["class" "public" "private" "static" "return" "if" "else" "for" "while" "new" "import" "package"] @keyword
(type_identifier) @type
(method_declaration name: (identifier) @function)
(decimal_integer_literal) @number
(string_literal) @string
(line_comment) @comment
(block_comment) @comment
"#;

const RUBY: &str = r#"
["def" "end" "class" "module" "if" "else" "elsif" "return" "do" "while"] @keyword
(integer) @number
(string) @string
(comment) @comment
"#;

const SWIFT: &str = r#"
(comment) @comment
(multiline_comment) @comment
(line_string_literal) @string
(integer_literal) @number
"#;

/// The grammar name for a code fence's info string (`rust`, `rs`, `py`...).
pub fn language_for_fence(info: &str) -> Option<&'static str> {
    let word = info.split([' ', ',', '{']).next().unwrap_or("").trim();
    let word = word.to_ascii_lowercase();
    if word.is_empty() {
        return None;
    }
    if let Some(known) = agent_syntax::languages().iter().find(|l| **l == word) {
        return Some(known);
    }
    match word.as_str() {
        "js" | "node" => Some("javascript"),
        "ts" => Some("typescript"),
        "golang" => Some("go"),
        "c++" => Some("cpp"),
        "py3" | "python3" => Some("python"),
        _ => agent_syntax::language_for_path(&format!("x.{word}")),
    }
}

/// The highlight query of `language`.
pub fn query_for(language: &str) -> Option<String> {
    Some(match language {
        "rust" => RUST.to_string(),
        "python" => PYTHON.to_string(),
        "javascript" => JAVASCRIPT.to_string(),
        "typescript" | "tsx" => format!("{JAVASCRIPT}{TYPESCRIPT_EXTRA}"),
        "go" => GO.to_string(),
        "c" | "cpp" => C.to_string(),
        "java" => JAVA.to_string(),
        "ruby" => RUBY.to_string(),
        "swift" => SWIFT.to_string(),
        _ => return None,
    })
}

fn role_of(capture: &str) -> Option<Role> {
    Some(match capture {
        "keyword" => Role::Keyword,
        "string" => Role::String,
        "comment" => Role::Comment,
        "number" => Role::Number,
        "function" => Role::Function,
        "type" => Role::Type,
        "constant" => Role::Constant,
        _ => return None,
    })
}

/// Precedence when captures overlap: comments and strings cover what is inside them.
fn rank(role: Role) -> u8 {
    match role {
        Role::Comment | Role::String => 2,
        _ => 1,
    }
}

/// The roles of each byte of `code` in `language` (`None`: plain). An unknown
/// language or a failing query leaves everything plain.
pub fn byte_roles(language: Option<&str>, code: &str) -> Vec<Option<Role>> {
    let mut roles: Vec<Option<Role>> = vec![None; code.len()];
    let Some(language) = language else {
        return roles;
    };
    let Some(query) = query_for(language) else {
        return roles;
    };
    let Ok(matches) = agent_syntax::query(language, code, &query) else {
        return roles;
    };
    for m in matches {
        for c in m.captures {
            let Some(role) = role_of(&c.name) else {
                continue;
            };
            let (start, end) = (c.start_byte as usize, (c.end_byte as usize).min(code.len()));
            for slot in roles.iter_mut().take(end).skip(start) {
                if slot.is_none_or(|old| rank(old) <= rank(role)) {
                    *slot = Some(role);
                }
            }
        }
    }
    roles
}

/// `code` as highlighted lines (no trailing empty line for a final `\n`).
pub fn highlight(language: Option<&str>, code: &str, theme: Theme) -> Vec<Line<'static>> {
    let roles = byte_roles(language, code);
    let mut lines = Vec::new();
    let mut offset = 0;
    for text in code.split('\n') {
        let mut spans: Vec<Span<'static>> = Vec::new();
        let mut run = String::new();
        let mut run_role: Option<Role> = None;
        for (i, ch) in text.char_indices() {
            let role = roles.get(offset + i).copied().flatten();
            if role != run_role && !run.is_empty() {
                spans.push(Span::styled(
                    std::mem::take(&mut run),
                    theme.style(run_role.unwrap_or(Role::Code)),
                ));
            }
            run_role = role;
            if ch == '\t' {
                run.push_str("    ");
            } else {
                run.push(ch);
            }
        }
        if !run.is_empty() {
            spans.push(Span::styled(
                run,
                theme.style(run_role.unwrap_or(Role::Code)),
            ));
        }
        lines.push(Line::from(spans));
        offset += text.len() + 1;
    }
    if code.ends_with('\n') {
        lines.pop();
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_query_compiles_against_its_grammar() {
        for lang in agent_syntax::languages() {
            if let Some(q) = query_for(lang) {
                agent_syntax::query(lang, "", &q)
                    .unwrap_or_else(|e| panic!("highlight query for {lang}: {e}"));
            }
        }
    }

    #[test]
    fn rust_keywords_strings_and_comments_are_told_apart() {
        let code = "fn main() { let s = \"fn\"; } // fn";
        let roles = byte_roles(Some("rust"), code);
        assert_eq!(roles[0], Some(Role::Keyword));
        assert_eq!(roles[3], Some(Role::Function));
        let string_at = code.find("\"fn\"").unwrap();
        assert_eq!(roles[string_at + 1], Some(Role::String));
        let comment_at = code.find("//").unwrap();
        assert_eq!(roles[comment_at + 3], Some(Role::Comment));
    }

    #[test]
    fn fences_name_grammars() {
        assert_eq!(language_for_fence("rs"), Some("rust"));
        assert_eq!(language_for_fence("python"), Some("python"));
        assert_eq!(language_for_fence("ts {title=x}"), Some("typescript"));
        assert_eq!(language_for_fence(""), None);
        assert_eq!(language_for_fence("text"), None);
    }
}
