//! The signature covers the manifest, through the binary: an installed skill
//! whose SKILL.yaml was edited is refused by every command until it is
//! re-signed or re-installed; `agent skill install` refuses an edited source;
//! a 0.1.0-era signature gets the re-install message.

use agent_tests::{build_guest, sign_legacy_v1, text, tool_manifest, write_skill};

use super::{code, ok, sandbox};

#[test]
fn an_edited_installed_manifest_is_refused_until_it_is_re_signed() {
    let sb = sandbox();
    let key = sb.trusted_key();
    let hello = std::fs::read(build_guest("rust-hello")).expect("rust-hello");
    let src = sb.home.path().join("src").join("hello");
    write_skill(&src, &tool_manifest("hello", ""), &hello, Some(&key));
    let src_s = src.to_str().expect("utf8");
    ok(&sb.agent(&["skill", "install", src_s]));
    let installed = sb.paths().user_skills_dir().join("hello");
    let call = || {
        sb.agent(&[
            "skill",
            "call",
            "hello",
            "greet",
            "--input",
            r#"{"name":"x"}"#,
        ])
    };
    assert!(ok(&call()).contains("Hello, x!"));

    // Widen the installed manifest: now it declares shell:exec.
    let yaml = installed.join("SKILL.yaml");
    let text_now = std::fs::read_to_string(&yaml).expect("manifest");
    std::fs::write(&yaml, format!("{text_now}permissions: [shell:exec]\n")).expect("edit");

    let out = call();
    let (stdout, stderr) = text(&out);
    println!("call after the edit: {stderr}");
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(!stdout.contains("Hello"), "{stdout}");
    assert!(
        stderr.contains("skill `hello` refused: SKILL.yaml changed after it was signed"),
        "{stderr}"
    );
    assert!(stderr.contains("agent skill sign"), "{stderr}");
    let out = sb.agent(&["skill", "list"]);
    let (stdout, stderr) = text(&out);
    assert!(
        stderr.contains("SKILL.yaml changed after it was signed"),
        "{stdout}{stderr}"
    );
    assert!(!stdout.lines().any(|l| l.starts_with("hello ")), "{stdout}");

    // The publisher re-signs it (it now covers the new manifest): it loads.
    let (key_file, _) = key
        .write_pair(sb.home.path(), "publisher")
        .expect("key files");
    let signed = ok(&sb.agent(&[
        "skill",
        "sign",
        installed.to_str().expect("utf8"),
        "--key",
        key_file.to_str().expect("utf8"),
    ]));
    assert!(signed.contains("covers SKILL.yaml"), "{signed}");
    assert!(ok(&call()).contains("Hello, x!"));
}

#[test]
fn install_refuses_a_source_edited_after_signing_and_old_signatures() {
    let sb = sandbox();
    let key = sb.trusted_key();
    let hello = std::fs::read(build_guest("rust-hello")).expect("rust-hello");
    let src = sb.home.path().join("src").join("hello");
    write_skill(&src, &tool_manifest("hello", ""), &hello, Some(&key));
    let yaml = src.join("SKILL.yaml");
    let text_now = std::fs::read_to_string(&yaml).expect("manifest");
    std::fs::write(
        &yaml,
        text_now.replace("test skill hello", "an innocent skill"),
    )
    .expect("edit");
    let out = sb.agent(&["skill", "install", src.to_str().expect("utf8")]);
    let (stdout, stderr) = text(&out);
    println!("install: {stderr}");
    assert_ne!(code(&out), 0, "{stdout}{stderr}");
    assert!(
        stderr.contains("SKILL.yaml changed after it was signed"),
        "{stderr}"
    );
    assert!(
        !sb.paths().user_skills_dir().join("hello").exists(),
        "nothing installed"
    );

    // A 0.1.0-era install: the component alone was signed.
    let old = sb.paths().user_skills_dir().join("old-hello");
    write_skill(
        &old,
        &tool_manifest("old-hello", ""),
        &sign_legacy_v1(&hello, &key),
        None,
    );
    let out = sb.agent(&[
        "skill",
        "call",
        "old-hello",
        "greet",
        "--input",
        r#"{"name":"x"}"#,
    ]);
    let (stdout, stderr) = text(&out);
    println!("0.1.0 signature: {stderr}");
    assert_eq!(code(&out), 1, "{stdout}{stderr}");
    assert!(
        stderr.contains("in the old format of agent 0.1.0, which does not cover SKILL.yaml"),
        "{stderr}"
    );
    assert!(
        stderr.contains("re-install it (`agent skill install SOURCE`)")
            && stderr.contains("re-sign it (`agent skill sign DIR --key FILE`)"),
        "{stderr}"
    );
}
