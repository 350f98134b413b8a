//! A compact `.gitignore` matcher (the `ignore` crate would triple the
//! component's size for the part of it this skill needs).
//!
//! Supported: comments, blank lines, trailing-space trimming, `\` escapes,
//! `!` negation, a trailing `/` for directories only, anchoring (a pattern
//! with a `/` other than a trailing one is relative to its file's
//! directory, one without matches a name at any depth), `*`, `?`, `[...]`
//! classes (ranges, `!`/`^` negation), and `**` in the forms `**/x`, `x/**`
//! and `x/**/y`. Within a file the last matching pattern wins; a
//! [`IgnoreStack`] lets deeper files override shallower ones, as git does.

/// One element of a compiled glob.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Token {
    /// This exact character.
    Lit(char),
    /// `?`: one character other than `/`.
    One,
    /// `*`: any run of characters without `/`.
    Star,
    /// `**/`: nothing, or any run of characters ending with `/`.
    AnyDirs,
    /// A trailing `/**` (or a lone `**`): any run of characters.
    All,
    /// `[...]`: one character other than `/` in (or, negated, not in) the
    /// ranges.
    Class {
        negated: bool,
        ranges: Vec<(char, char)>,
    },
}

/// One line of an ignore file.
#[derive(Debug, Clone, PartialEq, Eq)]
struct Pattern {
    /// `!pattern`: re-includes what an earlier pattern excluded.
    negated: bool,
    /// `pattern/`: matches directories only.
    dir_only: bool,
    /// Matched against the whole path relative to the file's directory
    /// (unanchored patterns get a leading `**/`).
    tokens: Vec<Token>,
}

/// The patterns of one ignore file.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct IgnoreFile {
    patterns: Vec<Pattern>,
}

/// What an ignore file says about a path.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verdict {
    /// A pattern excludes it.
    Ignore,
    /// A negated pattern re-includes it.
    Include,
}

impl IgnoreFile {
    /// Parses the text of a `.gitignore` (or `.ignore`) file.
    pub fn parse(text: &str) -> Self {
        IgnoreFile {
            patterns: text.lines().filter_map(parse_line).collect(),
        }
    }

    /// Whether the file has no patterns.
    pub fn is_empty(&self) -> bool {
        self.patterns.is_empty()
    }

    /// The verdict of the last pattern matching `path` (relative to this
    /// file's directory, `/`-separated), or `None` when none matches.
    pub fn verdict(&self, path: &str, is_dir: bool) -> Option<Verdict> {
        let chars: Vec<char> = path.chars().collect();
        self.patterns
            .iter()
            .rev()
            .find(|p| (is_dir || !p.dir_only) && glob_match(&p.tokens, &chars))
            .map(|p| {
                if p.negated {
                    Verdict::Include
                } else {
                    Verdict::Ignore
                }
            })
    }
}

/// Ignore files from the walk's root down to the current directory; deeper
/// files take precedence.
#[derive(Debug, Clone, Default)]
pub struct IgnoreStack {
    /// (directory relative to the walk root, `/`-separated, `""` for the
    /// root; its file), shallowest first.
    files: Vec<(String, IgnoreFile)>,
}

impl IgnoreStack {
    /// An empty stack: nothing is ignored.
    pub fn new() -> Self {
        IgnoreStack::default()
    }

    /// Adds the file found in directory `dir` (relative to the walk root);
    /// it takes precedence over those pushed before.
    pub fn push(&mut self, dir: &str, file: IgnoreFile) {
        self.files.push((dir.to_string(), file));
    }

    /// How many files are on the stack (to [`truncate`](Self::truncate) back
    /// to when leaving a directory).
    pub fn len(&self) -> usize {
        self.files.len()
    }

    /// Whether the stack holds no file.
    pub fn is_empty(&self) -> bool {
        self.files.is_empty()
    }

    /// Drops the files pushed after the stack had `len` of them.
    pub fn truncate(&mut self, len: usize) {
        self.files.truncate(len);
    }

    /// Whether `path` (relative to the walk root) is ignored.
    pub fn is_ignored(&self, path: &str, is_dir: bool) -> bool {
        for (dir, file) in self.files.iter().rev() {
            let relative = if dir.is_empty() {
                Some(path)
            } else {
                path.strip_prefix(dir.as_str())
                    .and_then(|p| p.strip_prefix('/'))
            };
            if let Some(relative) = relative
                && let Some(verdict) = file.verdict(relative, is_dir)
            {
                return verdict == Verdict::Ignore;
            }
        }
        false
    }
}

/// Parses one line; `None` for blanks and comments.
fn parse_line(line: &str) -> Option<Pattern> {
    let line = line.strip_suffix('\r').unwrap_or(line);
    if line.is_empty() || line.starts_with('#') {
        return None;
    }
    let line = trim_trailing_spaces(line);
    let (negated, line) = match line.strip_prefix('!') {
        Some(rest) => (true, rest),
        None => (false, line),
    };
    let (dir_only, line) = match line.strip_suffix('/') {
        Some(rest) if !rest.ends_with('\\') => (true, rest),
        _ => (false, line),
    };
    if line.is_empty() {
        return None;
    }
    let anchored = line.contains('/');
    let line = line.strip_prefix('/').unwrap_or(line);
    let mut tokens = compile(line);
    if !anchored {
        tokens.insert(0, Token::AnyDirs);
    }
    Some(Pattern {
        negated,
        dir_only,
        tokens,
    })
}

/// Removes trailing spaces unless escaped with a backslash.
fn trim_trailing_spaces(line: &str) -> &str {
    let mut end = line.len();
    while line[..end].ends_with(' ') {
        let before = &line[..end - 1];
        let backslashes = before.len() - before.trim_end_matches('\\').len();
        if backslashes % 2 == 1 {
            break;
        }
        end -= 1;
    }
    &line[..end]
}

/// Compiles a glob into tokens.
fn compile(glob: &str) -> Vec<Token> {
    let chars: Vec<char> = glob.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        match chars[i] {
            '\\' if i + 1 < chars.len() => {
                tokens.push(Token::Lit(chars[i + 1]));
                i += 2;
            }
            '*' => {
                let start = i;
                while i < chars.len() && chars[i] == '*' {
                    i += 1;
                }
                let double = i - start >= 2;
                let at_segment_start = start == 0 || chars[start - 1] == '/';
                if double && at_segment_start && i == chars.len() {
                    tokens.push(Token::All);
                } else if double && at_segment_start && chars[i] == '/' {
                    tokens.push(Token::AnyDirs);
                    i += 1;
                } else {
                    tokens.push(Token::Star);
                }
            }
            '?' => {
                tokens.push(Token::One);
                i += 1;
            }
            '[' => match compile_class(&chars, i) {
                Some((token, next)) => {
                    tokens.push(token);
                    i = next;
                }
                None => {
                    tokens.push(Token::Lit('['));
                    i += 1;
                }
            },
            c => {
                tokens.push(Token::Lit(c));
                i += 1;
            }
        }
    }
    tokens
}

/// Compiles the class starting at `chars[open] == '['`; returns the token
/// and the index after the closing `]`, or `None` if it is not closed.
fn compile_class(chars: &[char], open: usize) -> Option<(Token, usize)> {
    let mut i = open + 1;
    let negated = matches!(chars.get(i), Some('!' | '^'));
    if negated {
        i += 1;
    }
    let mut ranges = Vec::new();
    let mut first = true;
    loop {
        let c = *chars.get(i)?;
        if c == ']' && !first {
            return Some((Token::Class { negated, ranges }, i + 1));
        }
        first = false;
        let c = if c == '\\' {
            i += 1;
            *chars.get(i)?
        } else {
            c
        };
        if chars.get(i + 1) == Some(&'-') && chars.get(i + 2).is_some_and(|&e| e != ']') {
            let mut end = chars[i + 2];
            i += 2;
            if end == '\\' {
                i += 1;
                end = *chars.get(i)?;
            }
            ranges.push((c, end));
        } else {
            ranges.push((c, c));
        }
        i += 1;
    }
}

/// Whether the glob matches the whole of `text`: a simulation of the
/// glob's automaton, linear in `tokens × text`, without backtracking.
///
/// State `i` means "the first `i` tokens matched". An [`Token::AnyDirs`]
/// has a second state, "inside a directory name", from which only a `/`
/// leads back to where it may end: `**/b` matches `x/b` but not `xb`.
fn glob_match(tokens: &[Token], text: &[char]) -> bool {
    let n = tokens.len();
    let mut at = vec![false; n + 1];
    let mut inside = vec![false; n];
    at[0] = true;
    close(tokens, &mut at);
    for &c in text {
        let mut next = vec![false; n + 1];
        let mut next_inside = vec![false; n];
        for (i, token) in tokens.iter().enumerate() {
            if inside[i] || (at[i] && *token == Token::AnyDirs) {
                if c == '/' {
                    next[i] = true;
                } else {
                    next_inside[i] = true;
                }
            }
            if !at[i] {
                continue;
            }
            match token {
                Token::Lit(l) => next[i + 1] |= *l == c,
                Token::One => next[i + 1] |= c != '/',
                Token::Class { negated, ranges } => {
                    let member = ranges.iter().any(|&(lo, hi)| lo <= c && c <= hi);
                    next[i + 1] |= c != '/' && member != *negated;
                }
                Token::Star => next[i] |= c != '/',
                Token::All => next[i] = true,
                Token::AnyDirs => {}
            }
        }
        close(tokens, &mut next);
        if !next.iter().chain(&next_inside).any(|&s| s) {
            return false;
        }
        at = next;
        inside = next_inside;
    }
    at[n]
}

/// Adds the states reachable without consuming a character.
fn close(tokens: &[Token], states: &mut [bool]) {
    for (i, token) in tokens.iter().enumerate() {
        if states[i] && matches!(token, Token::Star | Token::All | Token::AnyDirs) {
            states[i + 1] = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn ignored(gitignore: &str, path: &str, is_dir: bool) -> bool {
        let mut stack = IgnoreStack::new();
        stack.push("", IgnoreFile::parse(gitignore));
        stack.is_ignored(path, is_dir)
    }

    #[test]
    fn a_name_without_slash_matches_at_any_depth() {
        assert!(ignored("target", "target", true));
        assert!(ignored("target", "a/b/target", true));
        assert!(ignored("*.log", "x.log", false));
        assert!(ignored("*.log", "logs/deep/x.log", false));
        assert!(!ignored("*.log", "x.logs", false));
        assert!(!ignored("target", "targets", true));
        assert!(!ignored("target", "mytarget", true));
        assert!(!ignored("target", "a/mytarget", true));
    }

    #[test]
    fn a_slash_anchors_to_the_file_directory() {
        assert!(ignored("/build", "build", true));
        assert!(!ignored("/build", "src/build", true));
        assert!(ignored("doc/frotz", "doc/frotz", false));
        assert!(!ignored("doc/frotz", "a/doc/frotz", false));
    }

    #[test]
    fn a_trailing_slash_matches_directories_only() {
        assert!(ignored("out/", "out", true));
        assert!(!ignored("out/", "out", false));
        assert!(ignored("out/", "src/out", true));
    }

    #[test]
    fn star_does_not_cross_slashes() {
        assert!(ignored("src/*.rs", "src/a.rs", false));
        assert!(!ignored("src/*.rs", "src/x/a.rs", false));
        assert!(ignored("a?c", "abc", false));
        assert!(!ignored("a?c", "a/c", false));
    }

    #[test]
    fn double_stars() {
        assert!(ignored("**/foo", "foo", true));
        assert!(ignored("**/foo", "a/b/foo", true));
        assert!(ignored("**/foo/bar", "x/foo/bar", false));
        assert!(ignored("abc/**", "abc/x", false));
        assert!(ignored("abc/**", "abc/x/y", false));
        assert!(!ignored("abc/**", "abc", true));
        assert!(ignored("a/**/b", "a/b", false));
        assert!(ignored("a/**/b", "a/x/y/b", false));
        assert!(!ignored("a/**/b", "a/xb", false));
        assert!(ignored("a**b", "axxb", false));
    }

    #[test]
    fn classes() {
        assert!(ignored("*.[oa]", "x.o", false));
        assert!(ignored("*.[oa]", "x.a", false));
        assert!(!ignored("*.[oa]", "x.c", false));
        assert!(ignored("file[0-9]", "file7", false));
        assert!(!ignored("file[!0-9]", "file7", false));
        assert!(ignored("file[^0-9]", "filex", false));
        assert!(ignored("[]]x", "]x", false));
        assert!(ignored("a[", "a[", false));
    }

    #[test]
    fn the_last_match_wins_and_negation_re_includes() {
        let rules = "*.log\n!keep.log\n";
        assert!(ignored(rules, "a.log", false));
        assert!(!ignored(rules, "keep.log", false));
        assert!(ignored("!keep.log\n*.log\n", "keep.log", false));
    }

    #[test]
    fn comments_blanks_escapes_and_spaces() {
        let rules = "# comment\n\n\\#hash\n\\!bang\ntrailing   \nkept\\ \n";
        assert!(ignored(rules, "#hash", false));
        assert!(ignored(rules, "!bang", false));
        assert!(ignored(rules, "trailing", false));
        assert!(ignored(rules, "kept ", false));
        assert!(!ignored(rules, "# comment", false));
        assert!(IgnoreFile::parse("# only\n\n").is_empty());
        assert!(ignored("crlf\r\n", "crlf", false));
    }

    #[test]
    fn deeper_files_override_shallower_ones() {
        let mut stack = IgnoreStack::new();
        stack.push("", IgnoreFile::parse("*.gen\n"));
        stack.push("keep", IgnoreFile::parse("!*.gen\n/local\n"));
        assert!(stack.is_ignored("a.gen", false));
        assert!(stack.is_ignored("other/a.gen", false));
        assert!(!stack.is_ignored("keep/a.gen", false));
        assert!(stack.is_ignored("keep/local", false));
        assert!(!stack.is_ignored("local", false));
        let len = stack.len();
        stack.push("keep/sub", IgnoreFile::parse("*\n"));
        assert!(stack.is_ignored("keep/sub/x", false));
        stack.truncate(len);
        assert!(!stack.is_ignored("keep/sub/x", false));
    }

    #[test]
    fn long_star_runs_stay_linear() {
        let pattern = "*a*a*a*a*a*a*a*a*a*a*a*b";
        let path = "a".repeat(200);
        assert!(!ignored(pattern, &path, false));
    }
}
