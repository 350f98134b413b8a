//! The walker's skips, and a full audit of a tiny tree with the built-in
//! `security-base` component, project rules and an offline OSV directory.

use std::path::Path;
use std::sync::Arc;

use agent_runtime::{
    Access, AccessRequest, Authorizer, CallContext, Limits, Origin, Runtime, SkillPackage,
    TrustPolicy,
};
use agent_security::walk::{SkipReason, WalkOptions, read_text, walk};
use agent_security::{AuditOptions, Severity, audit};

fn write(root: &Path, rel: &str, text: &[u8]) {
    let p = root.join(rel);
    std::fs::create_dir_all(p.parent().unwrap()).unwrap();
    std::fs::write(p, text).unwrap();
}

#[test]
fn walker_skips_ignored_and_large_and_walks_every_dotfile() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".gitignore", b"build/\n*.log\n");
    write(root, "src/app.py", b"print('hi')\n");
    write(root, "build/out.py", b"x\n");
    write(root, "debug.log", b"x\n");
    write(root, ".hidden/secret.py", b"x\n");
    write(root, ".vscode/settings.json", b"{}\n");
    write(root, ".github/workflows/ci.yml", b"on: push\n");
    write(root, ".env.production", b"A=1\n");
    write(root, ".security.yaml", b"rules: []\n");
    write(root, "big.txt", &vec![b'a'; 2048]);
    write(root, "img.bin", b"\x89PNG\0\0\0binary");
    write(root, "Cargo.lock", b"version = 3\n");
    write(root, "web/.ignore", b"vendor/\n");
    write(root, "web/vendor/lib.js", b"x\n");
    write(root, "web/index.js", b"x\n");
    let w = walk(
        root,
        &WalkOptions {
            max_file_bytes: 1024,
            ..WalkOptions::default()
        },
    )
    .unwrap();
    let paths: Vec<&str> = w.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            ".env.production",
            ".github/workflows/ci.yml",
            ".gitignore",
            ".hidden/secret.py",
            ".security.yaml",
            ".vscode/settings.json",
            "Cargo.lock",
            "img.bin",
            "src/app.py",
            "web/.ignore",
            "web/index.js",
        ]
    );
    assert_eq!(w.files[8].language, Some("python"));
    assert_eq!(w.files[10].language, Some("javascript"));
    assert_eq!(w.skipped.len(), 1);
    assert_eq!(w.skipped[0].path, "big.txt");
    assert_eq!(w.skipped[0].reason, SkipReason::TooLarge);
    assert_eq!(w.lockfiles.len(), 1);
    // Binary files are recognised when read.
    assert_eq!(read_text(&root.join("img.bin"), 1024).unwrap(), None);
    assert!(read_text(&root.join("src/app.py"), 1024).unwrap().is_some());
    // Diff scope restricts the walk.
    let only = WalkOptions {
        max_file_bytes: 1024,
        only: Some(["src/app.py".to_string()].into_iter().collect()),
        ..WalkOptions::default()
    };
    assert_eq!(walk(root, &only).unwrap().files.len(), 1);
}

#[test]
fn latin1_is_read_as_text_and_a_nul_means_binary() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // Latin-1 is read as text (invalid bytes as U+FFFD), lines kept; before,
    // anything not UTF-8 was "binary" and never scanned.
    write(root, "legacy.py", b"# caf\xe9\nKEY = 1\n");
    let text = read_text(&root.join("legacy.py"), 1024).unwrap().unwrap();
    assert_eq!(text, "# caf\u{fffd}\nKEY = 1\n");
    write(root, "blob.dat", b"ab\0cd\xe9");
    assert_eq!(read_text(&root.join("blob.dat"), 1024).unwrap(), None);
}

struct AllowAll;
impl Authorizer for AllowAll {
    fn check(&self, _: &AccessRequest<'_>) -> Access {
        Access::Granted
    }
    fn record_use(&self, _: &str, _: &str, _: &str, _: &str) {}
}

fn security_base(runtime: &Runtime) -> agent_runtime::Skill {
    let b = agent_builtins::all()
        .iter()
        .find(|b| b.name == "security-base")
        .expect("security-base is built in");
    let files = b
        .named_files()
        .map(|(p, bytes)| (p.to_string(), Arc::from(bytes)))
        .collect();
    let pkg = SkillPackage::in_memory(
        "<built-in>/SKILL.yaml",
        b.manifest,
        files,
        Some(agent_runtime::ComponentBytes::Deflated(b.component)),
        Origin::Builtin,
    )
    .unwrap();
    let keys = tempfile::tempdir().unwrap();
    let trust = TrustPolicy {
        store: agent_trust::TrustStore::load(keys.path()).unwrap(),
        builtin_key: Some(agent_builtins::public_key().unwrap()),
        allow_unsigned: false,
    };
    runtime.load(pkg, &trust).unwrap()
}

#[test]
fn audits_a_tiny_tree_with_security_base() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    // A fake key built from pieces (no literal secret in the source).
    let key = format!("{}{}", "AKIA", "Z7Q3LMXW2VKP9TRB");
    write(
        root,
        "app.py",
        format!(
            "import hashlib\nAWS_ACCESS_KEY_ID = \"{key}\"\n\ndef h(x):\n    return hashlib.md5(x).hexdigest()\n\ndef run(q):\n    db.execute(\"SELECT * FROM t WHERE id = \" + q)\n"
        )
        .as_bytes(),
    );
    write(root, "Dockerfile", b"FROM python:latest\nUSER root\n");
    write(root, "clean.py", b"def add(a, b):\n    return a + b\n");
    write(
        root,
        ".security.yaml",
        b"rules:\n  - id: CUSTOM-PRINT\n    title: print in production code\n    severity: low\n    category: logging-monitoring\n    pattern: {type: regex, match: 'hexdigest'}\noverrides:\n  - id: CUSTOM-PRINT\n    severity: info\n    note: fine here\ndependencies:\n  banned:\n    - package: left-pad\n      reason: use String.prototype.padStart\nci:\n  fail_on: critical\n",
    );
    write(
        root,
        "package-lock.json",
        br#"{
  "name": "x",
  "lockfileVersion": 3,
  "packages": {
    "": { "name": "x", "dependencies": { "left-pad": "1.3.0", "lodash": "4.17.20" } },
    "node_modules/left-pad": { "version": "1.3.0" },
    "node_modules/lodash": { "version": "4.17.20" }
  }
}
"#,
    );
    let osv = tempfile::tempdir().unwrap();
    write(
        osv.path(),
        "npm/GHSA-35jh-r3h4-6jhm.json",
        br#"{"id":"GHSA-35jh-r3h4-6jhm","summary":"Command Injection in lodash","details":"template","aliases":["CVE-2021-23337"],
"affected":[{"package":{"ecosystem":"npm","name":"lodash"},"ranges":[{"type":"SEMVER","events":[{"introduced":"0"},{"fixed":"4.17.21"}]}]}],
"database_specific":{"severity":"HIGH"},"references":[{"type":"WEB","url":"https://github.com/lodash/lodash/issues/5085"}]}"#,
    );

    let runtime = Runtime::new(None, Limits::default()).unwrap();
    let skill = security_base(&runtime);
    let ctx = Arc::new(CallContext::new(root, "security-audit", Arc::new(AllowAll)).unwrap());
    let mut opts = AuditOptions::new(root);
    opts.osv_dir = Some(osv.path().to_path_buf());
    opts.jobs = 2;
    let calls = std::sync::atomic::AtomicUsize::new(0);
    let progress = |done: usize, total: usize| {
        assert!(done <= total);
        calls.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
    };
    let report = audit(
        &runtime,
        &ctx,
        std::slice::from_ref(&skill),
        &opts,
        &progress,
    )
    .unwrap();
    let got: Vec<(String, String, u32, String)> = report
        .findings
        .iter()
        .map(|f| {
            (
                f.rule_id.clone(),
                f.location.file.clone(),
                f.location.start_line,
                f.scanner.clone(),
            )
        })
        .collect();
    eprintln!("{got:#?}\nerrors: {:?}", report.errors);
    assert!(report.errors.is_empty(), "{:?}", report.errors);
    assert_eq!(calls.load(std::sync::atomic::Ordering::Relaxed), 5);
    assert_eq!(report.stats.files_scanned, 5);
    let has = |rule_prefix: &str, file: &str, line: u32| {
        report.findings.iter().any(|f| {
            f.rule_id.starts_with(rule_prefix)
                && f.location.file == file
                && f.location.start_line == line
        })
    };
    // security-base: a secret on line 2, md5 on line 5, SQL injection on line 8, the Dockerfile.
    assert!(
        report.findings.iter().any(|f| f.location.file == "app.py"
            && f.location.start_line == 2
            && f.category == "secrets-exposure"),
        "{got:?}"
    );
    assert!(
        report.findings.iter().any(|f| f.location.file == "app.py"
            && f.location.start_line == 8
            && f.category == "injection"),
        "{got:?}"
    );
    assert!(
        report
            .findings
            .iter()
            .any(|f| f.location.file == "Dockerfile"),
        "{got:?}"
    );
    assert!(
        !report
            .findings
            .iter()
            .any(|f| f.location.file == "clean.py"),
        "{got:?}"
    );
    // Project rule with its override.
    let custom: Vec<_> = report
        .findings
        .iter()
        .filter(|f| f.rule_id == "CUSTOM-PRINT")
        .collect();
    assert_eq!(
        custom.len(),
        1,
        "the rules file itself is not scanned by its rules"
    );
    let custom = custom[0];
    assert_eq!(custom.location.file, "app.py");
    assert_eq!(custom.location.start_line, 5);
    assert_eq!(custom.severity, Severity::Info);
    assert_eq!(custom.metadata["override_note"], "fine here");
    // Dependencies: OSV match and the ban, at the packages' lines.
    let dep = report
        .findings
        .iter()
        .find(|f| f.rule_id == "DEP-GHSA-35jh-r3h4-6jhm")
        .unwrap();
    assert_eq!(dep.location.file, "package-lock.json");
    assert_eq!(dep.severity, Severity::High);
    assert_eq!(dep.category, "vulnerable-dependency");
    assert!(dep.remediation.contains("4.17.21"), "{}", dep.remediation);
    let banned = report
        .findings
        .iter()
        .find(|f| f.rule_id == "DEP-BANNED")
        .unwrap();
    assert_eq!(banned.location.file, "package-lock.json");
    assert!(has(
        "DEP-BANNED",
        "package-lock.json",
        banned.location.start_line
    ));
    assert!(banned.location.start_line > 0);
    assert_eq!(banned.metadata["reason"], "use String.prototype.padStart");
    assert_eq!(report.packages.len(), 2);
    assert_eq!(report.vulnerabilities.len(), 1);
    // Scanner findings carry `<skill>/<scanner>`; built-ins have no skill_source.
    let secret = report
        .findings
        .iter()
        .find(|f| f.category == "secrets-exposure")
        .unwrap();
    assert_eq!(secret.scanner, "security-base/secrets");
    assert_eq!(secret.skill_source, None);
    assert!(!secret.evidence.contains(&key), "evidence is redacted");
    // Stats per scanner.
    let names: Vec<&str> = report
        .stats
        .scanners
        .iter()
        .map(|s| s.name.as_str())
        .collect();
    assert!(
        names.contains(&"security-base/secrets")
            && names.contains(&"rules")
            && names.contains(&"deps"),
        "{names:?}"
    );
    assert_eq!(report.scanners.len(), 3);
    // fail_on critical from .security.yaml: the critical secret fails the audit.
    assert_eq!(report.thresholds.fail_on, Some(Severity::Critical));
    assert_eq!(
        report.verdict.failed,
        report
            .findings
            .iter()
            .any(|f| f.severity == Severity::Critical)
    );
}

/// Issue 16: dot-directories holding credentials (`.ssh/`, `.aws/`, `.docker/`)
/// are walked; only `.git/`, the ignore files and the allowlist exclude, and
/// each exclusion is counted under the file that decided it.
#[test]
fn every_dotfile_is_walked_and_each_exclusion_is_counted_per_source() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    write(root, ".ssh/id_rsa", b"key\n");
    write(root, ".netrc", b"machine x\n");
    write(root, ".aws/credentials", b"[default]\n");
    write(root, ".docker/config.json", b"{}\n");
    write(root, ".git/config", b"[core]\n");
    write(root, ".git/info/exclude", b"local.txt\n");
    write(root, "local.txt", b"x\n");
    write(root, ".gitignore", b"*.log\nbuild/\n!keep.log\n");
    write(root, "a.log", b"x\n");
    write(root, "b.log", b"x\n");
    write(root, "keep.log", b"x\n");
    write(root, "build/out.js", b"x\n");
    write(root, "build/more/out.js", b"x\n");
    write(root, ".agentignore", b"keep.log\n");
    write(root, "web/.ignore", b"gen/\n");
    write(root, "web/gen/a.js", b"x\n");
    write(root, "web/.agentignore", b"secret-fixture.txt\n");
    write(root, "web/secret-fixture.txt", b"x\n");
    write(root, "vendor/lib.js", b"x\n");
    write(root, "vendor/sub/lib.js", b"x\n");
    let opts = WalkOptions {
        allowlist: agent_security::paths::PathPatterns::new(&["vendor/".to_string()]).unwrap(),
        ..WalkOptions::default()
    };
    let w = walk(root, &opts).unwrap();
    let paths: Vec<&str> = w.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(
        paths,
        [
            ".agentignore",
            ".aws/credentials",
            ".docker/config.json",
            ".gitignore",
            ".netrc",
            ".ssh/id_rsa",
            "web/.agentignore",
            "web/.ignore",
        ]
    );
    let counts: Vec<(&str, usize, usize)> = w
        .excluded
        .iter()
        .map(|e| (e.source.as_str(), e.files, e.directories))
        .collect();
    assert_eq!(
        counts,
        [
            (".agentignore", 1, 0),
            (".git/info/exclude", 1, 0),
            (".gitignore", 2, 1),
            (".security.yaml allowlist.paths", 2, 0),
            ("web/.agentignore", 1, 0),
            ("web/.ignore", 0, 1),
        ]
    );
}
