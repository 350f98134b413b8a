//! Risk scoring: which files the model's budget is spent on first.
//!
//! Each signal is a pattern over the file's text (framework and library
//! names across languages), a count of the static findings on the file, or
//! the number of recent commits that touched it. A signal that is present
//! adds its weight, plus one per further match up to [`EXTRA_MATCHES`]; the
//! score is the sum, and every signal that counted is a [`Reason`] naming
//! the first line it matched. Equal scores are ordered by path, so the
//! ranking is deterministic.

use std::collections::BTreeMap;
use std::sync::LazyLock;

use agent_security::{Finding, Severity};
use regex::Regex;
use serde::Serialize;

/// Further matches of a signal that add to its weight.
pub const EXTRA_MATCHES: u32 = 4;

/// The most the churn signal adds.
pub const MAX_CHURN: u32 = 5;

/// The most the static findings add.
pub const MAX_STATIC: u32 = 12;

/// One pattern signal: name, weight, pattern.
struct Signal {
    name: &'static str,
    weight: u32,
    re: Regex,
}

fn signal(name: &'static str, weight: u32, pattern: &str) -> Signal {
    Signal {
        name,
        weight,
        // The patterns are constants, checked by the tests.
        re: Regex::new(pattern).unwrap_or_else(|e| panic!("risk signal {name}: {e}")),
    }
}

static SIGNALS: LazyLock<Vec<Signal>> = LazyLock::new(|| {
    vec![
        signal(
            "route",
            4,
            r#"(?x)
            @(app|bp|blueprint|router|api)\.(route|get|post|put|patch|delete)\b
            | \b(app|router|server)\.(get|post|put|patch|delete|use|all)\s*\(\s*['"`/]
            | @(Get|Post|Put|Patch|Delete|Request)Mapping\b | @(GET|POST|PUT|DELETE|Path)\b
            | \bhttp\.HandleFunc\b | \bmux\.(Handle|HandleFunc)\b | \bgin\.Context\b
            | \#\[(get|post|put|patch|delete|route)\( | \bRouter::new\(\)
            | \burlpatterns\b | \bRoute::(get|post|put|patch|delete)\b
            | \bdef\s+(get|post|put|patch|delete)\s*\(\s*self\s*,\s*request
            "#,
        ),
        signal(
            "authn-authz",
            4,
            r"(?i)\b(login|logout|authenticate|authori[sz]e|is_admin|isAdmin|require_role|permission|password|passwd|jwt|bearer|oauth|session\[|current_user|access_control|login_required|@PreAuthorize|verify_token|check_auth)\b",
        ),
        signal(
            "sql",
            4,
            r#"(?i)(\bselect\b[^\n;]{0,80}\bfrom\b|\binsert\s+into\b|\bupdate\s+\w+\s+set\b|\bdelete\s+from\b|\.execute\s*\(|\.raw\s*\(|\bexecuteQuery\b|\bcreateStatement\b|\bdb\.query\b|\bcursor\s*\(\s*\))"#,
        ),
        signal(
            "deserialization",
            4,
            r"\b(pickle\.loads?|cPickle|yaml\.load|yaml\.unsafe_load|marshal\.loads?|unserialize|ObjectInputStream|readObject|Marshal\.load|BinaryFormatter|jsonpickle|shelve\.open|eval|exec)\s*\(",
        ),
        signal(
            "process",
            4,
            r"\b(subprocess\.\w+|os\.system|os\.popen|popen|child_process|execSync|spawnSync|Runtime\.getRuntime\(\)\.exec|ProcessBuilder|Command::new|exec\.Command|shell_exec|proc_open|passthru)\b",
        ),
        signal(
            "crypto",
            3,
            r"(?i)\b(hashlib\.\w+|md5|sha1|des|rc4|ecb|Cipher|createCipher\w*|AES|RSA|bcrypt|scrypt|pbkdf2|hmac|random\.random|Math\.random|SecureRandom|crypto/\w+|rand::)\b",
        ),
        signal(
            "file",
            2,
            r"\b(open|readFile\w*|writeFile\w*|createReadStream|send_file|send_from_directory|sendFile|File::open|os\.Open|os\.ReadFile|ioutil\.ReadFile|FileInputStream|fopen|file_get_contents|os\.path\.join|path\.join|Path\.Combine)\s*\(",
        ),
        signal(
            "network",
            3,
            r"\b(requests\.(get|post|put|delete|request)|urllib\.request\.urlopen|urlopen|httpx\.\w+|fetch|axios\.\w+|http\.Get|http\.Post|http\.NewRequest|reqwest::\w+|HttpClient|WebClient|RestTemplate|curl_exec|new URL)\s*\(",
        ),
    ]
});

/// Why a file scored what it did: one signal.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Reason {
    /// The signal (`route`, `sql`, `static-findings`, `churn`, ...).
    pub signal: String,
    /// What it added to the score.
    pub points: u32,
    /// In words, e.g. `3 matches, first on line 12`.
    pub detail: String,
}

/// One file's risk.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct FileRisk {
    /// The path, relative to the project, `/`-separated.
    pub file: String,
    /// The sum of the reasons' points.
    pub score: u32,
    /// Each signal that counted.
    pub reasons: Vec<Reason>,
}

impl FileRisk {
    /// Whether `signal` counted.
    pub fn has(&self, signal: &str) -> bool {
        self.reasons.iter().any(|r| r.signal == signal)
    }

    /// The first line `signal` matched on, when it is a pattern signal.
    pub fn first_line(&self, signal: &str) -> Option<u32> {
        let r = self.reasons.iter().find(|r| r.signal == signal)?;
        let (_, after) = r.detail.rsplit_once("line ")?;
        after.trim().parse().ok()
    }
}

/// What besides a file's text scores it.
#[derive(Debug, Clone, Default)]
pub struct Context {
    /// Static findings per file: (count, points by severity).
    static_findings: BTreeMap<String, (u32, u32)>,
    /// Commits among the recent ones that touched each file.
    pub churn: BTreeMap<String, u32>,
    /// How many recent commits were read (0: no history).
    pub commits_read: usize,
}

impl Context {
    /// A context with the static findings of the audit.
    pub fn new(findings: &[Finding]) -> Context {
        let mut static_findings: BTreeMap<String, (u32, u32)> = BTreeMap::new();
        for f in findings {
            let points = match f.severity {
                Severity::Critical => 5,
                Severity::High => 3,
                Severity::Medium => 2,
                Severity::Low => 1,
                Severity::Info => 0,
            };
            let e = static_findings.entry(f.location.file.clone()).or_default();
            e.0 += 1;
            e.1 += points;
        }
        Context {
            static_findings,
            churn: BTreeMap::new(),
            commits_read: 0,
        }
    }
}

fn line_of(text: &str, offset: usize) -> u32 {
    let n = text.as_bytes()[..offset]
        .iter()
        .filter(|b| **b == b'\n')
        .count();
    u32::try_from(n + 1).unwrap_or(u32::MAX)
}

/// Scores one file.
pub fn score(file: &str, text: &str, ctx: &Context) -> FileRisk {
    let mut reasons = Vec::new();
    for s in SIGNALS.iter() {
        let mut found = s.re.find_iter(text);
        let Some(first) = found.next() else {
            continue;
        };
        let more = u32::try_from(found.take(EXTRA_MATCHES as usize).count()).unwrap_or(0);
        let matches = if more >= EXTRA_MATCHES {
            format!("{}+ matches", EXTRA_MATCHES + 1)
        } else if more == 0 {
            "1 match".to_string()
        } else {
            format!("{} matches", more + 1)
        };
        reasons.push(Reason {
            signal: s.name.to_string(),
            points: s.weight + more,
            detail: format!(
                "{matches} (`{}`), first on line {}",
                first.as_str().trim().chars().take(40).collect::<String>(),
                line_of(text, first.start())
            ),
        });
    }
    if let Some((count, points)) = ctx.static_findings.get(file)
        && *points > 0
    {
        reasons.push(Reason {
            signal: "static-findings".into(),
            points: (*points).min(MAX_STATIC),
            detail: format!("{count} static finding(s) on this file"),
        });
    }
    if let Some(n) = ctx.churn.get(file)
        && *n > 0
    {
        reasons.push(Reason {
            signal: "churn".into(),
            points: (*n).min(MAX_CHURN),
            detail: format!("changed by {n} of the last {} commits", ctx.commits_read),
        });
    }
    FileRisk {
        file: file.to_string(),
        score: reasons.iter().map(|r| r.points).sum(),
        reasons,
    }
}

/// Scores every file and ranks them: highest score first, then by path.
/// Files without any signal are left out.
pub fn rank<'a>(
    files: impl IntoIterator<Item = (&'a str, &'a str)>,
    ctx: &Context,
) -> Vec<FileRisk> {
    let mut ranked: Vec<FileRisk> = files
        .into_iter()
        .map(|(f, t)| score(f, t, ctx))
        .filter(|r| r.score > 0)
        .collect();
    ranked.sort_by(|a, b| b.score.cmp(&a.score).then_with(|| a.file.cmp(&b.file)));
    ranked
}

/// The files a `git show` patch touched (its `diff --git a/X b/Y` lines,
/// the new path).
pub fn touched(patch: &str) -> Vec<String> {
    let mut out: Vec<String> = patch
        .lines()
        .filter_map(|l| l.strip_prefix("diff --git "))
        .filter_map(|rest| rest.rsplit_once(" b/").map(|(_, b)| b.to_string()))
        .collect();
    out.dedup();
    out
}

/// The commit ids of a `git_log` answer (`commit <id>` lines).
pub fn commit_ids(log: &str) -> Vec<String> {
    log.lines()
        .filter_map(|l| l.strip_prefix("commit "))
        .map(|id| id.trim().to_string())
        .filter(|id| !id.is_empty())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_security::Location;

    const HANDLER: &str = "from flask import Flask, request\napp = Flask(__name__)\n\n\
        @app.route('/user')\ndef user():\n    q = \"SELECT * FROM users WHERE id = \" + request.args['id']\n\
        \x20   return db.execute(q)\n";

    #[test]
    fn a_route_with_sql_outranks_a_helper_and_says_why() {
        let ctx = Context::new(&[]);
        let ranked = rank(
            [
                ("util/strings.py", "def pad(s):\n    return s.ljust(10)\n"),
                ("app/views.py", HANDLER),
                ("app/files.py", "def read(p):\n    return open(p).read()\n"),
            ],
            &ctx,
        );
        let files: Vec<&str> = ranked.iter().map(|r| r.file.as_str()).collect();
        assert_eq!(files, ["app/views.py", "app/files.py"], "{ranked:#?}");
        let top = &ranked[0];
        assert!(top.has("route") && top.has("sql"), "{top:#?}");
        assert_eq!(top.first_line("route"), Some(4));
        let route = top.reasons.iter().find(|r| r.signal == "route").unwrap();
        assert_eq!(route.detail, "1 match (`@app.route`), first on line 4");
    }

    #[test]
    fn static_findings_and_churn_add_points_with_caps() {
        let mut f = Finding::new(
            "X",
            "s",
            Severity::Critical,
            "injection",
            "t",
            Location {
                file: "a.py".into(),
                start_line: 1,
                end_line: 1,
                start_column: 0,
                end_column: 0,
                function: None,
            },
        );
        f.fingerprint(None);
        let mut ctx = Context::new(&[f.clone(), f.clone(), f.clone()]);
        ctx.churn.insert("a.py".into(), 9);
        ctx.commits_read = 20;
        let r = score("a.py", "x = 1\n", &ctx);
        assert_eq!(r.score, MAX_STATIC + MAX_CHURN, "{r:#?}");
        assert_eq!(r.reasons[1].detail, "changed by 9 of the last 20 commits");
    }

    #[test]
    fn equal_scores_rank_by_path() {
        let ctx = Context::new(&[]);
        let t = "import os\nos.system(cmd)\n";
        let ranked = rank([("b.py", t), ("a.py", t)], &ctx);
        assert_eq!(ranked[0].file, "a.py");
        assert_eq!(ranked[1].file, "b.py");
    }

    #[test]
    fn history_is_read_from_the_git_skill_answers() {
        assert_eq!(
            commit_ids("commit abc\nAuthor: a\n\n    m\n\ncommit def\n"),
            ["abc", "def"]
        );
        assert_eq!(
            touched("commit abc\n\ndiff --git a/x.py b/x.py\n+1\ndiff --git a/old b/new.py\n"),
            ["x.py", "new.py"]
        );
    }
}
