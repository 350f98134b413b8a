//! SKILL.md instruction skills through a signed index (issue 20: "installable from ... the
//! registry"): `agent registry publish DIR` scans, packs and records `kind: instructions`;
//! `agent skill install NAME --index DIR` checks the artifact against the signed snapshot,
//! scans the unpacked copy and installs it with its index and version. A tampered artifact
//! and a high-severity skill are refused, the latter unless `--force`, audited.

use std::path::{Path, PathBuf};

use agent_tests::{Sandbox, copy_tree, text};

use super::registry::s;
use super::{code, ok, sandbox, write};

pub(super) const PLAIN: &str = "---\nname: plain\ndescription: Plain instructions. Use for fixture tests.\nmetadata:\n  version: \"1.2.0\"\n---\nPLAIN-BODY-MARKER: say \"plain loaded\".\n";

/// A key made at test time (trusted by this sandbox's user) and an empty index.
pub(super) fn index_and_key(sb: &Sandbox) -> (PathBuf, PathBuf) {
    let keys = sb.home.path().join("publisher-keys");
    ok(&sb.agent(&[
        "keys",
        "generate",
        "--name",
        "publisher",
        "--out",
        s(&keys),
        "--trust",
    ]));
    let index = sb.home.path().join("index");
    ok(&sb.agent(&["registry", "init", s(&index)]));
    (index, keys.join("publisher.key"))
}

pub(super) fn publish(
    sb: &Sandbox,
    dir: &Path,
    key: &Path,
    index: &Path,
    extra: &[&str],
) -> std::process::Output {
    let mut args = vec![
        "registry",
        "publish",
        s(dir),
        "--key",
        s(key),
        "--index",
        s(index),
    ];
    args.extend_from_slice(extra);
    sb.agent(&args)
}

pub(super) fn audit(sb: &Sandbox) -> String {
    std::fs::read_to_string(sb.paths().audit_log_path()).unwrap_or_default()
}

#[test]
fn skillmd_registry_publish_and_install_by_name_reaches_skill_info() {
    let sb = sandbox();
    let (index, key) = index_and_key(&sb);
    let src = sb.home.path().join("src/plain");
    write(&src, "SKILL.md", PLAIN);
    write(&src, "reference/notes.md", "notes\n");
    write(&src, ".git/config", "hidden, never published\n");
    let stdout = ok(&publish(&sb, &src, &key, &index, &[]));
    assert!(
        stdout.contains("published plain 1.2.0 (SKILL.md instructions"),
        "{stdout}"
    );
    let vfile = std::fs::read_to_string(index.join("skills/plain/versions/1.2.0.yaml"))
        .expect("versions file");
    assert!(vfile.contains("kind: instructions"), "{vfile}");
    assert!(!vfile.contains("component"), "{vfile}");
    // The index still verifies: the snapshot covers the new versions file and its artifact.
    ok(&sb.agent(&["registry", "verify", s(&index)]));

    let stdout = ok(&sb.agent(&["skill", "install", "plain", "--index", s(&index)]));
    assert!(
        stdout.contains("installed plain 1.2.0 (SKILL.md instructions from index:"),
        "{stdout}"
    );
    let installed = sb.paths().user_skills_dir().join("plain");
    assert!(installed.join("reference/notes.md").is_file());

    // `skill update` knows it (updates are in tests/cli/skillmd_index_ops.rs).
    let stdout = ok(&sb.agent(&["skill", "update", "plain", "--index", s(&index)]));
    assert!(stdout.contains("plain 1.2.0 is up to date"), "{stdout}");
    let stdout = ok(&sb.agent(&["skill", "update", "--index", s(&index)]));
    assert!(stdout.contains("plain 1.2.0 is up to date"), "{stdout}");
    assert!(
        !installed.join(".git").exists(),
        "hidden files are not published"
    );

    let info: serde_json::Value = serde_json::from_str(&ok(
        &sb.agent(&["skill", "info", "plain", "--format", "json"])
    ))
    .expect("json");
    assert_eq!(info["kind"], "instructions");
    assert_eq!(info["version"], "1.2.0");
    assert!(
        info["source"].as_str().unwrap().starts_with("index:"),
        "{info}"
    );
    assert!(
        info["body"].as_str().unwrap().contains("PLAIN-BODY-MARKER"),
        "{info}"
    );
    let list = ok(&sb.agent(&["skill", "list"]));
    let row = list
        .lines()
        .find(|l| l.starts_with("plain "))
        .expect("plain row");
    assert!(row.contains("1.2.0") && row.contains("index:"), "{list}");

    // A component-only path (`skill add`, `update`) says plainly it is not for this kind.
    let out = sb.agent(&["skill", "add", "plain", "--index", s(&index)]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(
        stderr.contains("is a SKILL.md instruction skill"),
        "{stderr}"
    );

    // No version anywhere: a usage error naming the frontmatter key and the flag.
    let nov = sb.home.path().join("src/nov");
    write(
        &nov,
        "SKILL.md",
        &PLAIN
            .replace("name: plain", "name: nov")
            .replace("metadata:\n  version: \"1.2.0\"\n", ""),
    );
    let out = publish(&sb, &nov, &key, &index, &[]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 2, "{stderr}");
    assert!(
        stderr.contains("metadata.version") && stderr.contains("--skill-version"),
        "{stderr}"
    );
    ok(&publish(
        &sb,
        &nov,
        &key,
        &index,
        &["--skill-version", "0.3.0"],
    ));
}

#[test]
fn skillmd_registry_a_tampered_artifact_is_refused_naming_file_and_digests() {
    let sb = sandbox();
    let (index, key) = index_and_key(&sb);
    let src = sb.home.path().join("src/plain");
    write(&src, "SKILL.md", PLAIN);
    ok(&publish(&sb, &src, &key, &index, &[]));
    let artifact = index.join("artifacts/plain-1.2.0.tar.gz");
    let mut bytes = std::fs::read(&artifact).expect("artifact");
    let mid = bytes.len() / 2;
    bytes[mid] ^= 0x01;
    std::fs::write(&artifact, bytes).expect("write");

    let out = sb.agent(&["skill", "install", "plain", "--index", s(&index)]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    let vfile = std::fs::read_to_string(index.join("skills/plain/versions/1.2.0.yaml"))
        .expect("versions file");
    let expected = vfile
        .lines()
        .find_map(|l| l.trim().strip_prefix("sha256: "))
        .expect("artifact sha256");
    assert!(stderr.contains("artifacts/plain-1.2.0.tar.gz"), "{stderr}");
    assert!(stderr.contains(expected), "the expected digest: {stderr}");
    assert!(stderr.contains("does not match"), "{stderr}");
    assert!(!sb.paths().user_skills_dir().join("plain").exists());
}

#[test]
fn skillmd_registry_a_high_finding_is_refused_at_publish_and_install_unless_forced() {
    let sb = sandbox();
    let (index, key) = index_and_key(&sb);
    let fixture =
        Path::new(env!("CARGO_MANIFEST_DIR")).join("../../tests/fixtures/skillmd/injected");
    let src = sb.home.path().join("src/injected");
    copy_tree(&fixture, &src);

    let out = publish(&sb, &src, &key, &index, &["--skill-version", "1.0.0"]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(
        stderr.contains("not published: the content scan"),
        "{stderr}"
    );
    assert!(!index.join("skills/injected").exists());
    assert!(
        audit(&sb).contains("refused: content scan"),
        "{}",
        audit(&sb)
    );

    let out = publish(
        &sb,
        &src,
        &key,
        &index,
        &["--skill-version", "1.0.0", "--force"],
    );
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(stderr.contains("publishing despite"), "{stderr}");
    assert!(
        audit(&sb).contains("forced: content scan"),
        "{}",
        audit(&sb)
    );

    let out = sb.agent(&["skill", "install", "injected", "--index", s(&index)]);
    let (_, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stderr}");
    assert!(
        stderr.contains("not installed: the content scan of index:"),
        "{stderr}"
    );
    assert!(!sb.paths().user_skills_dir().join("injected").exists());

    let out = sb.agent(&[
        "skill",
        "install",
        "injected",
        "--index",
        s(&index),
        "--force",
    ]);
    let (_, stderr) = text(&out);
    assert!(out.status.success(), "{stderr}");
    assert!(
        sb.paths()
            .user_skills_dir()
            .join("injected/SKILL.md")
            .is_file()
    );
}
