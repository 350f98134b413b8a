//! The section templates' language: `{{variable}}` and `{{#each list}}
//! ... {{/each}}`, nothing else.
//!
//! Variables (docs/wiki-sections.md):
//! - `{{project.name}}` — the project's name;
//! - `{{skill.name}}`, `{{skill.version}}` — the contributing skill;
//! - `{{modules}}` — a Markdown list of the modules (`- `name` (path)`);
//! - `{{modules.count}}` — how many there are;
//! - `{{languages}}` — the project's languages, comma-separated;
//! - any key of [`TemplateContext::values`] (e.g. an analyzer's output);
//! - inside `{{#each modules}} ... {{/each}}`: `{{name}}` and `{{path}}` of
//!   each module.
//!
//! An unknown variable, an unclosed `{{`, an `{{#each}}` of something that
//! is not a list, or an unbalanced `{{/each}}` is a [`TemplateError`]
//! naming the skill, the template file and the line.

use std::collections::BTreeMap;
use std::path::PathBuf;

/// What a template can refer to.
#[derive(Debug, Clone, Default)]
pub struct TemplateContext {
    /// `{{project.name}}`.
    pub project_name: String,
    /// `{{modules}}`, `{{#each modules}}`: (name, path relative to the
    /// project).
    pub modules: Vec<(String, PathBuf)>,
    /// `{{languages}}`.
    pub languages: Vec<String>,
    /// Further variables by name (e.g. `analyzer.summary`).
    pub values: BTreeMap<String, String>,
}

/// A template that cannot be rendered.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("skill `{skill}`: wiki template {file}:{line}: {message}")]
pub struct TemplateError {
    /// The contributing skill.
    pub skill: String,
    /// The template, relative to the skill directory.
    pub file: PathBuf,
    /// 1-based line.
    pub line: usize,
    /// What is wrong, and what would be right.
    pub message: String,
}

/// One piece of a parsed template.
enum Piece<'t> {
    Text(&'t str),
    Var {
        name: &'t str,
        line: usize,
    },
    Each {
        list: &'t str,
        line: usize,
        body: Vec<Piece<'t>>,
    },
}

/// The skill whose template is rendered (for variables and errors).
pub struct Source<'a> {
    /// Its name.
    pub skill: &'a str,
    /// Its version.
    pub version: &'a str,
    /// The template file, relative to the skill directory.
    pub file: &'a std::path::Path,
}

/// Renders `template` with `cx`.
pub fn render(
    template: &str,
    source: &Source<'_>,
    cx: &TemplateContext,
) -> Result<String, TemplateError> {
    let error = |line: usize, message: String| TemplateError {
        skill: source.skill.to_string(),
        file: source.file.to_path_buf(),
        line,
        message,
    };
    let pieces = parse(template).map_err(|(line, message)| error(line, message))?;
    let mut out = String::with_capacity(template.len());
    emit(&pieces, source, cx, None, &mut out).map_err(|(line, message)| error(line, message))?;
    Ok(out)
}

type Failure = (usize, String);

fn parse(template: &str) -> Result<Vec<Piece<'_>>, Failure> {
    // A stack of open `each` blocks: (list, line, pieces so far).
    let mut stack: Vec<(&str, usize, Vec<Piece<'_>>)> = vec![("", 0, Vec::new())];
    let mut rest = template;
    let mut offset = 0;
    let line_of = |at: usize| template[..at].matches('\n').count() + 1;
    while let Some(open) = rest.find("{{") {
        let at = offset + open;
        let Some(close) = rest[open..].find("}}") else {
            return Err((line_of(at), "`{{` is never closed by `}}`".to_string()));
        };
        let inner = rest[open + 2..open + close].trim();
        let line = line_of(at);
        let top = &mut stack.last_mut().expect("the root is never popped").2;
        if open > 0 {
            top.push(Piece::Text(&rest[..open]));
        }
        if let Some(list) = inner.strip_prefix("#each ") {
            stack.push((list.trim(), line, Vec::new()));
        } else if inner == "/each" {
            if stack.len() == 1 {
                return Err((
                    line,
                    "`{{/each}}` without an `{{#each ...}}` before it".to_string(),
                ));
            }
            let (list, opened, body) = stack.pop().expect("checked above");
            stack
                .last_mut()
                .expect("the root is never popped")
                .2
                .push(Piece::Each {
                    list,
                    line: opened,
                    body,
                });
        } else if inner.is_empty() || inner.contains(char::is_whitespace) {
            return Err((line, format!("`{{{{{inner}}}}}` is not a variable name")));
        } else {
            top.push(Piece::Var { name: inner, line });
        }
        let consumed = open + close + 2;
        offset += consumed;
        rest = &rest[consumed..];
    }
    if !rest.is_empty() {
        stack.last_mut().expect("root").2.push(Piece::Text(rest));
    }
    if stack.len() > 1 {
        let (list, line, _) = stack.pop().expect("checked");
        return Err((
            line,
            format!("`{{{{#each {list}}}}}` is never closed by `{{{{/each}}}}`"),
        ));
    }
    Ok(stack.pop().expect("root").2)
}

const KNOWN: &str = "project.name, skill.name, skill.version, modules, modules.count, languages";

fn emit(
    pieces: &[Piece<'_>],
    source: &Source<'_>,
    cx: &TemplateContext,
    item: Option<&(String, PathBuf)>,
    out: &mut String,
) -> Result<(), Failure> {
    for piece in pieces {
        match piece {
            Piece::Text(text) => out.push_str(text),
            Piece::Var { name, line } => out.push_str(&variable(name, *line, source, cx, item)?),
            Piece::Each { list, line, body } => {
                if *list != "modules" {
                    return Err((
                        *line,
                        format!("`{{{{#each {list}}}}}`: only `modules` is a list"),
                    ));
                }
                for module in &cx.modules {
                    emit(body, source, cx, Some(module), out)?;
                }
            }
        }
    }
    Ok(())
}

fn variable(
    name: &str,
    line: usize,
    source: &Source<'_>,
    cx: &TemplateContext,
    item: Option<&(String, PathBuf)>,
) -> Result<String, Failure> {
    Ok(match (name, item) {
        ("name", Some((module, _))) => module.clone(),
        ("path", Some((_, path))) => path.display().to_string(),
        ("project.name", _) => cx.project_name.clone(),
        ("skill.name", _) => source.skill.to_string(),
        ("skill.version", _) => source.version.to_string(),
        ("modules.count", _) => cx.modules.len().to_string(),
        ("languages", _) => cx.languages.join(", "),
        ("modules", _) => cx
            .modules
            .iter()
            .map(|(name, path)| format!("- `{name}` ({})\n", path.display()))
            .collect(),
        _ => match cx.values.get(name) {
            Some(value) => value.clone(),
            None => {
                let inside = if item.is_some() {
                    ", and inside `{{#each modules}}`: name, path"
                } else {
                    ""
                };
                let extra: Vec<&str> = cx.values.keys().map(String::as_str).collect();
                let extra = if extra.is_empty() {
                    String::new()
                } else {
                    format!(", {}", extra.join(", "))
                };
                return Err((
                    line,
                    format!("unknown variable `{{{{{name}}}}}`; known: {KNOWN}{extra}{inside}"),
                ));
            }
        },
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::Path;

    fn source() -> Source<'static> {
        Source {
            skill: "kubernetes",
            version: "1.2.0",
            file: Path::new("wiki/k8s.md"),
        }
    }

    fn cx() -> TemplateContext {
        TemplateContext {
            project_name: "shop".into(),
            modules: vec![
                ("api".into(), "src/api".into()),
                ("db".into(), "src/db".into()),
            ],
            languages: vec!["Go".into(), "YAML".into()],
            values: BTreeMap::from([("analyzer.replicas".to_string(), "3".to_string())]),
        }
    }

    #[test]
    fn variables_lists_and_loops_render() {
        let text = "# {{ project.name }} on Kubernetes\nBy {{skill.name}} {{skill.version}}: {{modules.count}} modules in {{languages}}.\n{{modules}}{{#each modules}}| {{name}} | {{path}} |\n{{/each}}Replicas: {{analyzer.replicas}}\n";
        let out = render(text, &source(), &cx()).unwrap();
        assert_eq!(
            out,
            "# shop on Kubernetes\nBy kubernetes 1.2.0: 2 modules in Go, YAML.\n- `api` (src/api)\n- `db` (src/db)\n| api | src/api |\n| db | src/db |\nReplicas: 3\n"
        );
    }

    #[test]
    fn an_unknown_variable_names_the_skill_file_and_line() {
        let error = render("# T\n\nHello {{project.nmae}}\n", &source(), &cx()).unwrap_err();
        assert_eq!(error.line, 3);
        assert!(
            error.to_string().starts_with("skill `kubernetes`: wiki template wiki/k8s.md:3: unknown variable `{{project.nmae}}`; known: project.name"),
            "{error}"
        );
    }

    #[test]
    fn broken_blocks_are_errors_with_their_line() {
        let unclosed = render("a\n{{#each modules}}\n{{name}}\n", &source(), &cx()).unwrap_err();
        assert_eq!(
            (unclosed.line, unclosed.message.contains("never closed")),
            (2, true),
            "{unclosed}"
        );
        let stray = render("{{/each}}", &source(), &cx()).unwrap_err();
        assert!(stray.message.contains("without"), "{stray}");
        let open = render("x\ny {{project.name", &source(), &cx()).unwrap_err();
        assert_eq!(open.line, 2, "{open}");
        let not_list = render("{{#each languages}}{{/each}}", &source(), &cx()).unwrap_err();
        assert!(not_list.message.contains("only `modules`"), "{not_list}");
        let loop_var = render("{{name}}", &source(), &cx()).unwrap_err();
        assert!(
            loop_var.message.contains("unknown variable `{{name}}`"),
            "{loop_var}"
        );
    }
}
