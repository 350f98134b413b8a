//! An offline check of a declarative Jenkinsfile: the Groovy it is written
//! in is tokenized (strings, comments, brackets) and its blocks are checked
//! against the declarative pipeline's structure — one `pipeline` with an
//! `agent` and `stages`, every `stage('name')` with exactly one of `steps`,
//! `stages`, `parallel`, `matrix`, only the directives and `post` conditions
//! Jenkins knows, only known step names — and every `sh` step's script is
//! collected (for shellcheck and for the commands the CI test runs).
//!
//! Jenkins' own linter (`declarative-linter`) needs a running controller;
//! this is the strongest check that runs without one.

/// A token of the Groovy subset a declarative pipeline is written in.
#[derive(Debug, Clone, PartialEq)]
enum Tok {
    Word(String),
    /// A string literal's text; `interpolated` for `"…"`/`"""…"""` (GStrings).
    Str {
        text: String,
        interpolated: bool,
    },
    Punct(char),
    Newline,
}

fn tokenize(src: &str) -> Result<Vec<(Tok, usize)>, String> {
    let chars: Vec<char> = src.chars().collect();
    let mut out = Vec::new();
    let (mut i, mut line) = (0, 1);
    while i < chars.len() {
        let c = chars[i];
        let rest: String = chars[i..chars.len().min(i + 3)].iter().collect();
        if c == '\n' {
            out.push((Tok::Newline, line));
            line += 1;
            i += 1;
        } else if c.is_whitespace() {
            i += 1;
        } else if rest.starts_with("//") {
            while i < chars.len() && chars[i] != '\n' {
                i += 1;
            }
        } else if rest.starts_with("/*") {
            let start = line;
            i += 2;
            while i + 1 < chars.len() && !(chars[i] == '*' && chars[i + 1] == '/') {
                line += usize::from(chars[i] == '\n');
                i += 1;
            }
            if i + 1 >= chars.len() {
                return Err(format!("line {start}: unterminated comment"));
            }
            i += 2;
        } else if rest == "'''" || rest == "\"\"\"" {
            let (start, quote) = (line, c);
            i += 3;
            let mut text = String::new();
            loop {
                if i >= chars.len() {
                    return Err(format!(
                        "line {start}: unterminated {quote}{quote}{quote} string"
                    ));
                }
                if chars[i..].starts_with(&[quote, quote, quote]) {
                    i += 3;
                    break;
                }
                line += usize::from(chars[i] == '\n');
                text.push(chars[i]);
                i += 1;
            }
            out.push((
                Tok::Str {
                    text,
                    interpolated: quote == '"',
                },
                start,
            ));
        } else if c == '\'' || c == '"' {
            let start = line;
            i += 1;
            let mut text = String::new();
            loop {
                match chars.get(i) {
                    None | Some('\n') => {
                        return Err(format!("line {start}: unterminated {c} string"));
                    }
                    Some('\\') => {
                        text.push(*chars.get(i + 1).unwrap_or(&'\\'));
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        text.push(other);
                        i += 1;
                    }
                }
            }
            out.push((
                Tok::Str {
                    text,
                    interpolated: c == '"',
                },
                start,
            ));
        } else if "{}()[],:=".contains(c) {
            out.push((Tok::Punct(c), line));
            i += 1;
        } else {
            let mut word = String::new();
            while i < chars.len() && !chars[i].is_whitespace() && !"{}()[],:='\"".contains(chars[i])
            {
                word.push(chars[i]);
                i += 1;
            }
            out.push((Tok::Word(word), line));
        }
    }
    Ok(out)
}

/// A statement (`sh '…'`, `agent any`, `PATH = "…"`) or a block (`steps { … }`).
#[derive(Debug)]
struct Node {
    head: Vec<Tok>,
    line: usize,
    body: Option<Vec<Node>>,
}

impl Node {
    fn name(&self) -> &str {
        match self.head.first() {
            Some(Tok::Word(w)) => w,
            _ => "",
        }
    }
}

/// Items until the `}` closing this level (or the end, at the top).
fn parse_items(toks: &[(Tok, usize)], pos: &mut usize, top: bool) -> Result<Vec<Node>, String> {
    let mut items = Vec::new();
    loop {
        let Some((tok, line)) = toks.get(*pos) else {
            return if top {
                Ok(items)
            } else {
                Err("a `{` is never closed".into())
            };
        };
        match tok {
            Tok::Newline => *pos += 1,
            Tok::Punct('}') if !top => {
                *pos += 1;
                return Ok(items);
            }
            Tok::Punct('}') => return Err(format!("line {line}: `}}` without its `{{`")),
            _ => items.push(parse_item(toks, pos)?),
        }
    }
}

fn parse_item(toks: &[(Tok, usize)], pos: &mut usize) -> Result<Node, String> {
    let line = toks[*pos].1;
    let mut head = Vec::new();
    let mut depth = 0usize;
    while let Some((tok, l)) = toks.get(*pos) {
        match tok {
            Tok::Punct('(' | '[') => depth += 1,
            Tok::Punct(')' | ']') => {
                depth = depth
                    .checked_sub(1)
                    .ok_or_else(|| format!("line {l}: unbalanced `)` or `]`"))?;
            }
            Tok::Punct('{') if depth == 0 => {
                *pos += 1;
                let body = parse_items(toks, pos, false)?;
                return Ok(Node {
                    head,
                    line,
                    body: Some(body),
                });
            }
            Tok::Punct('{') => return Err(format!("line {l}: a closure inside brackets")),
            Tok::Punct('}') if depth == 0 => break,
            Tok::Newline if depth == 0 => break,
            _ => {}
        }
        if *tok != Tok::Newline {
            head.push(tok.clone());
        }
        *pos += 1;
    }
    if depth != 0 {
        return Err(format!("line {line}: unbalanced brackets"));
    }
    Ok(Node {
        head,
        line,
        body: None,
    })
}

const PIPELINE: &[&str] = &[
    "agent",
    "environment",
    "options",
    "parameters",
    "triggers",
    "tools",
    "stages",
    "post",
    "libraries",
];
const STAGE: &[&str] = &[
    "agent",
    "environment",
    "when",
    "steps",
    "post",
    "options",
    "tools",
    "input",
    "stages",
    "parallel",
    "matrix",
];
const POST: &[&str] = &[
    "always",
    "changed",
    "fixed",
    "regression",
    "aborted",
    "failure",
    "success",
    "unstable",
    "unsuccessful",
    "cleanup",
];
const WHEN: &[&str] = &[
    "branch",
    "buildingTag",
    "changelog",
    "changeset",
    "changeRequest",
    "environment",
    "equals",
    "expression",
    "tag",
    "not",
    "allOf",
    "anyOf",
    "triggeredBy",
    "beforeAgent",
    "beforeInput",
    "beforeOptions",
];
const STEPS: &[&str] = &[
    "sh",
    "echo",
    "archiveArtifacts",
    "recordIssues",
    "junit",
    "error",
    "stash",
    "unstash",
    "checkout",
    "git",
    "deleteDir",
    "writeFile",
    "sleep",
    "withCredentials",
];
const OPTIONS: &[&str] = &[
    "timeout",
    "timestamps",
    "buildDiscarder",
    "disableConcurrentBuilds",
    "skipDefaultCheckout",
    "retry",
    "ansiColor",
];

/// A `sh` step's script and the line it starts on.
pub struct ShStep {
    pub line: usize,
    pub script: String,
}

struct Checker {
    sh: Vec<ShStep>,
}

impl Checker {
    fn only(&self, nodes: &[Node], allowed: &[&str], what: &str) -> Result<(), String> {
        for n in nodes {
            if !allowed.contains(&n.name()) {
                return Err(format!(
                    "line {}: `{}` is not allowed in {what} (one of: {})",
                    n.line,
                    n.name(),
                    allowed.join(", ")
                ));
            }
        }
        Ok(())
    }

    fn block<'a>(&self, n: &'a Node) -> Result<&'a [Node], String> {
        n.body
            .as_deref()
            .ok_or_else(|| format!("line {}: `{}` needs a {{ … }} block", n.line, n.name()))
    }

    fn pipeline(&mut self, p: &Node) -> Result<(), String> {
        let items = self.block(p)?;
        self.only(items, PIPELINE, "pipeline")?;
        let has = |name: &str| items.iter().filter(|n| n.name() == name).count();
        if has("agent") != 1 || has("stages") != 1 {
            return Err("pipeline needs exactly one `agent` and one `stages`".into());
        }
        for n in items {
            match n.name() {
                "environment" => {
                    for e in self.block(n)? {
                        let ok =
                            matches!(e.head.as_slice(), [Tok::Word(_), Tok::Punct('='), _, ..]);
                        if !ok || e.body.is_some() {
                            return Err(format!("line {}: environment takes NAME = value", e.line));
                        }
                    }
                }
                "options" => self.only(self.block(n)?, OPTIONS, "options")?,
                "stages" => self.stages(n)?,
                "post" => self.post(n)?,
                _ => {}
            }
        }
        Ok(())
    }

    fn stages(&mut self, n: &Node) -> Result<(), String> {
        let stages = self.block(n)?;
        if stages.is_empty() {
            return Err(format!("line {}: `stages` without a stage", n.line));
        }
        for s in stages {
            let named = matches!(
                s.head.as_slice(),
                [Tok::Word(w), Tok::Punct('('), Tok::Str { .. }, Tok::Punct(')')] if w == "stage"
            );
            if !named {
                return Err(format!(
                    "line {}: `stages` holds only stage('NAME') {{ … }}",
                    s.line
                ));
            }
            let items = self.block(s)?;
            self.only(items, STAGE, "a stage")?;
            let bodies = items
                .iter()
                .filter(|i| ["steps", "stages", "parallel", "matrix"].contains(&i.name()))
                .count();
            if bodies != 1 {
                return Err(format!(
                    "line {}: a stage needs exactly one of steps, stages, parallel, matrix",
                    s.line
                ));
            }
            for i in items {
                match i.name() {
                    "steps" => self.steps(self.block(i)?)?,
                    "stages" => self.stages(i)?,
                    "post" => self.post(i)?,
                    "when" => self.only(self.block(i)?, WHEN, "when")?,
                    _ => {}
                }
            }
        }
        Ok(())
    }

    fn post(&mut self, n: &Node) -> Result<(), String> {
        let conditions = self.block(n)?;
        self.only(conditions, POST, "post")?;
        for c in conditions {
            self.steps(self.block(c)?)?;
        }
        Ok(())
    }

    fn steps(&mut self, steps: &[Node]) -> Result<(), String> {
        self.only(steps, STEPS, "steps")?;
        for s in steps {
            if let ("withCredentials", Some(body)) = (s.name(), &s.body) {
                self.steps(body)?;
                continue;
            }
            if s.body.is_some() {
                return Err(format!(
                    "line {}: `{}` takes no block here",
                    s.line,
                    s.name()
                ));
            }
            if s.name() != "sh" {
                continue;
            }
            match s.head.as_slice() {
                [
                    _,
                    Tok::Str {
                        text,
                        interpolated: false,
                    },
                ] => self.sh.push(ShStep {
                    line: s.line,
                    script: text.clone(),
                }),
                [
                    _,
                    Tok::Str {
                        interpolated: true, ..
                    },
                ] => {
                    return Err(format!(
                        "line {}: a \"…\" sh script is interpolated by Groovy (secrets end up in \
                         the command line); use '…' and let the shell expand $VARIABLES",
                        s.line
                    ));
                }
                _ => return Err(format!("line {}: sh takes one '…' script", s.line)),
            }
        }
        Ok(())
    }
}

/// Checks `src` as a declarative pipeline; returns its `sh` scripts.
pub fn check(src: &str) -> Result<Vec<ShStep>, String> {
    let toks = tokenize(src)?;
    let mut pos = 0;
    let top = parse_items(&toks, &mut pos, true)?;
    match top.as_slice() {
        [p] if p.name() == "pipeline" && p.head.len() == 1 => {
            let mut checker = Checker { sh: Vec::new() };
            checker.pipeline(p)?;
            Ok(checker.sh)
        }
        _ => Err("a declarative Jenkinsfile is one `pipeline { … }` block".into()),
    }
}
