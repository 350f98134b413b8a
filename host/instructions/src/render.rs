//! Invocation: `$ARGUMENTS` and `$1…$9` substituted, `!command` lines (dynamic context) run
//! through the caller's runner — the host's `exec` path, with its grants and audit — and
//! `!read FILE` lines replaced by a file of the skill's directory. No shell is ever used: a
//! command using shell syntax is left out and the user is told why.

use std::path::{Path, PathBuf};

use regex::Regex;

use crate::parse::InstructionSkill;

/// Largest file `!read` includes.
pub const MAX_READ_BYTES: u64 = 256 * 1024;

/// One `!command` line, split into a program and its arguments.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandLine {
    /// The program: a name on PATH, or the absolute path of a script in the skill's
    /// directory (written relative to it in the SKILL.md).
    pub program: String,
    /// Its arguments, after substitution.
    pub args: Vec<String>,
    /// 1-based line in the SKILL.md.
    pub line: usize,
}

impl CommandLine {
    /// The command as one line (arguments with spaces quoted).
    pub fn display(&self) -> String {
        let mut s = self.program.clone();
        for a in &self.args {
            s.push(' ');
            if a.is_empty() || a.contains(char::is_whitespace) {
                s.push_str(&format!("{a:?}"));
            } else {
                s.push_str(a);
            }
        }
        s
    }
}

/// What the runner did with a command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum RunOutcome {
    /// Its output, which replaces the line.
    Output(String),
    /// Not run; the reason (for a missing grant: which grant would run it).
    LeftOut(String),
}

/// A `!` line that was not replaced by output.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct DynamicLine {
    /// 1-based line in the SKILL.md.
    pub line: usize,
    /// The line as written.
    pub text: String,
    /// Why it was left out.
    pub reason: String,
}

/// The body ready for the model.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rendered {
    /// The instructions, substituted, with command output in place.
    pub text: String,
    /// Commands that ran (the line and the command).
    pub ran: Vec<(usize, String)>,
    /// `!` lines left out, each with its reason.
    pub left_out: Vec<DynamicLine>,
}

/// Splits a command line into words: whitespace separates, `'…'` and `"…"` quote (with `\`
/// escaping inside double quotes). `Err` names shell syntax, which is not supported.
pub fn split_command(line: &str) -> Result<Vec<String>, String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut in_word = false;
    let mut chars = line.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\'' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('\'') => break,
                        Some(c) => cur.push(c),
                        None => return Err("an unclosed `'`".into()),
                    }
                }
            }
            '"' => {
                in_word = true;
                loop {
                    match chars.next() {
                        Some('"') => break,
                        Some('\\') => match chars.next() {
                            Some(c) => cur.push(c),
                            None => return Err("a `\\` at the end".into()),
                        },
                        Some('$') if chars.peek() == Some(&'(') => {
                            return Err("shell syntax `$(`".into());
                        }
                        Some('`') => return Err("shell syntax `` ` ``".into()),
                        Some(c) => cur.push(c),
                        None => return Err("an unclosed `\"`".into()),
                    }
                }
            }
            '|' | ';' | '&' | '<' | '>' | '`' | '(' | ')' => {
                return Err(format!("shell syntax `{c}`"));
            }
            '$' if chars.peek() == Some(&'(') => return Err("shell syntax `$(`".into()),
            c if c.is_whitespace() => {
                if in_word {
                    words.push(std::mem::take(&mut cur));
                    in_word = false;
                }
            }
            '\\' => {
                in_word = true;
                if let Some(c) = chars.next() {
                    cur.push(c);
                }
            }
            c => {
                in_word = true;
                cur.push(c);
            }
        }
    }
    if in_word {
        words.push(cur);
    }
    Ok(words)
}

fn placeholder() -> &'static Regex {
    static RE: std::sync::OnceLock<Regex> = std::sync::OnceLock::new();
    RE.get_or_init(|| Regex::new(r"\$(ARGUMENTS|[1-9])").expect("valid regex"))
}

/// `$ARGUMENTS` → `args`, `$N` → the N-th argument (empty when absent).
pub fn substitute(text: &str, args: &str, positional: &[String]) -> String {
    placeholder()
        .replace_all(text, |c: &regex::Captures<'_>| match &c[1] {
            "ARGUMENTS" => args.to_string(),
            n => {
                let i: usize = n.parse().unwrap_or(1);
                positional.get(i - 1).cloned().unwrap_or_default()
            }
        })
        .into_owned()
}

/// The words of a command template with the arguments substituted: a word that is exactly
/// `$ARGUMENTS` becomes each argument (never re-split, never a shell word).
fn expand_words(words: Vec<String>, args: &str, positional: &[String]) -> Vec<String> {
    let mut out = Vec::new();
    for w in words {
        if w == "$ARGUMENTS" {
            out.extend(positional.iter().cloned());
        } else {
            out.push(substitute(&w, args, positional));
        }
    }
    out
}

/// A program written relative to the skill's directory (`scripts/x.sh`), as an absolute
/// path inside it; a bare name stays a name on PATH.
fn resolve_program(dir: &Path, program: &str) -> Result<String, String> {
    if !program.contains('/') || Path::new(program).is_absolute() {
        return Ok(program.to_string());
    }
    let p = confined(dir, program)?;
    Ok(p.to_string_lossy().into_owned())
}

/// `rel` inside `dir` (canonical), refusing `..`, absolute paths and symlinks out.
pub fn confined(dir: &Path, rel: &str) -> Result<PathBuf, String> {
    let rel_path = Path::new(rel);
    if rel_path.is_absolute()
        || rel_path
            .components()
            .any(|c| matches!(c, std::path::Component::ParentDir))
    {
        return Err(format!(
            "`{rel}` is not a path inside the skill's directory"
        ));
    }
    let root = dir
        .canonicalize()
        .map_err(|e| format!("the skill's directory {}: {e}", dir.display()))?;
    let p = root
        .join(rel_path)
        .canonicalize()
        .map_err(|e| format!("`{rel}`: {e}"))?;
    if !p.starts_with(&root) {
        return Err(format!("`{rel}` leads outside the skill's directory"));
    }
    Ok(p)
}

/// Renders the skill's body for an invocation with `args`. `run` decides about each
/// command (grants, audit) and runs it.
pub fn render(
    skill: &InstructionSkill,
    args: &str,
    run: &mut dyn FnMut(&CommandLine) -> RunOutcome,
) -> Rendered {
    let positional = split_command(args)
        .unwrap_or_else(|_| args.split_whitespace().map(str::to_string).collect());
    let mut text = String::new();
    let mut ran = Vec::new();
    let mut left_out = Vec::new();
    let mut in_fence = false;
    for (i, raw) in skill.body.split_inclusive('\n').enumerate() {
        let line_no = skill.body_line + i;
        let trimmed = raw.trim_start();
        if trimmed.starts_with("```") || trimmed.starts_with("~~~") {
            in_fence = !in_fence;
        }
        let command = (!in_fence)
            .then(|| trimmed.strip_prefix('!'))
            .flatten()
            .filter(|rest| {
                rest.starts_with(|c: char| c.is_ascii_alphanumeric() || c == '.' || c == '/')
            });
        let Some(command) = command else {
            text.push_str(&substitute(raw, args, &positional));
            continue;
        };
        let written = raw.trim_end().to_string();
        let mut leave = |reason: String| {
            left_out.push(DynamicLine {
                line: line_no,
                text: written.clone(),
                reason,
            });
        };
        let words = match split_command(command.trim_end()) {
            Ok(w) if !w.is_empty() => w,
            Ok(_) => {
                text.push_str(raw);
                continue;
            }
            Err(why) => {
                leave(format!(
                    "uses {why}; commands in a SKILL.md run without a shell: put it in a script in the skill's directory and name the script"
                ));
                continue;
            }
        };
        let words = expand_words(words, args, &positional);
        if words[0] == "read" {
            match read_file(&skill.dir, &words[1..]) {
                Ok(content) => {
                    text.push_str(&content);
                    if !content.ends_with('\n') {
                        text.push('\n');
                    }
                }
                Err(why) => leave(why),
            }
            continue;
        }
        let program = match resolve_program(&skill.dir, &words[0]) {
            Ok(p) => p,
            Err(why) => {
                leave(why);
                continue;
            }
        };
        let cmd = CommandLine {
            program,
            args: words[1..].to_vec(),
            line: line_no,
        };
        match run(&cmd) {
            RunOutcome::Output(out) => {
                ran.push((line_no, cmd.display()));
                text.push_str(&out);
                if !out.ends_with('\n') {
                    text.push('\n');
                }
            }
            RunOutcome::LeftOut(why) => leave(why),
        }
    }
    Rendered {
        text,
        ran,
        left_out,
    }
}

fn read_file(dir: &Path, args: &[String]) -> Result<String, String> {
    let [rel] = args else {
        return Err("`!read` takes one file of the skill's directory".into());
    };
    let path = confined(dir, rel)?;
    let meta = std::fs::metadata(&path).map_err(|e| format!("`{rel}`: {e}"))?;
    if !meta.is_file() {
        return Err(format!("`{rel}` is not a file"));
    }
    if meta.len() > MAX_READ_BYTES {
        return Err(format!("`{rel}` is larger than {MAX_READ_BYTES} bytes"));
    }
    let bytes = std::fs::read(&path).map_err(|e| format!("`{rel}`: {e}"))?;
    String::from_utf8(bytes).map_err(|_| format!("`{rel}` is not UTF-8 text"))
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
