//! A damaged audit log, through the real binary: what the user is told, and the way back
//! (`agent audit rotate`).

use super::{code, ok, sandbox, write};
use agent_tests::text;

fn read_a_txt(sb: &agent_tests::Sandbox) -> std::process::Output {
    sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "read_file",
        "--input",
        r#"{"path":"a.txt"}"#,
        "--allow",
        "file:read",
    ])
}

#[test]
fn a_damaged_audit_log_says_so_and_rotate_is_the_way_back() {
    let sb = sandbox();
    write(sb.project.path(), "a.txt", "the content\n");
    assert!(ok(&read_a_txt(&sb)).contains("the content"));

    // Someone edits the log's last entry (the decision that granted file:read).
    let log = sb.paths().audit_log_path();
    let original = std::fs::read_to_string(&log).expect("audit log");
    std::fs::write(
        &log,
        original.replace("granted:allowlist", "granted:stored"),
    )
    .expect("edit");

    // Every decision now fails, since none can be recorded. The message says so, where the log
    // is, and what to do; not that the skill lacks a permission its manifest declares.
    let out = read_a_txt(&sb);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 1, "{stdout}\n{stderr}");
    assert!(!stdout.contains("the content"), "{stdout}");
    assert!(!stderr.contains("file access was not granted"), "{stderr}");
    assert!(
        stderr.contains(&format!(
            "core-tools may not use file:read: audit log {} is damaged: the last entry (seq 1) does not match its hash",
            log.display()
        )),
        "{stderr}"
    );
    assert!(
        stderr.contains("run `agent audit verify` to see where, then `agent audit rotate`"),
        "{stderr}"
    );
    // An import fails the same way (exec asks for shell:exec on each use).
    let out = sb.agent(&[
        "skill",
        "call",
        "core-tools",
        "exec",
        "--allow",
        "core-tools/shell:exec:echo",
        "--input",
        r#"{"program":"echo","args":["hi"]}"#,
    ]);
    assert_ne!(code(&out), 0, "{:?}", text(&out));
    assert!(
        text(&out).1.contains("agent audit rotate"),
        "{:?}",
        text(&out)
    );

    // verify names the problem and the way back.
    let out = sb.agent(&["audit", "verify"]);
    assert_eq!(code(&out), 1);
    let stderr = text(&out).1;
    assert!(stderr.contains("line 1 (seq 1) was edited"), "{stderr}");
    assert!(
        stderr.contains("`agent audit rotate` seals this log aside"),
        "{stderr}"
    );

    // doctor finds it too, and names the same way back.
    let out = sb.agent(&["doctor"]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));
    let stdout = text(&out).0;
    assert!(
        stdout.contains("BROKEN") && stdout.contains("`agent audit rotate` seals it aside"),
        "{stdout}"
    );

    // rotate: the damaged log, its head and the verification report are kept side by side.
    let out = sb.agent(&["audit", "rotate"]);
    let stdout = ok(&out);
    assert!(
        stdout.contains("sealed the damaged audit log: line 1 (seq 1) was edited"),
        "{stdout}"
    );
    let dir = log.parent().expect("data dir");
    let mut sealed: Vec<String> = std::fs::read_dir(dir)
        .expect("ls")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.starts_with("audit.log.sealed-"))
        .collect();
    sealed.sort();
    assert_eq!(sealed.len(), 3, "{sealed:?}");
    let (name, head, report) = (&sealed[0], &sealed[1], &sealed[2]);
    assert_eq!(head, &format!("{name}.head"));
    assert_eq!(report, &format!("{name}.report.txt"));
    assert_eq!(
        std::fs::read_to_string(dir.join(name)).expect("sealed"),
        original.replace("granted:allowlist", "granted:stored")
    );
    let report = std::fs::read_to_string(dir.join(report)).expect("report");
    assert!(
        report.contains("verification:    FAILED: line 1 (seq 1) was edited"),
        "{report}"
    );

    // The new chain verifies and names its sealed predecessor; the sealed log still fails.
    let out = sb.agent(&["audit", "verify"]);
    let stdout = ok(&out);
    assert!(stdout.contains("1 entries, hash chain intact"), "{stdout}");
    assert!(
        stdout.contains(&format!(
            "it continues the log sealed by `agent audit rotate` as {}",
            dir.join(name).display()
        )),
        "{stdout}"
    );
    assert!(
        stdout.contains("sealed damaged log: line 1 (seq 1) was edited"),
        "{stdout}"
    );
    let sealed_path = dir.join(name);
    let out = sb.agent(&[
        "audit",
        "verify",
        "--log",
        sealed_path.to_str().expect("utf8"),
    ]);
    assert_eq!(code(&out), 1, "{:?}", text(&out));

    // And grants work again, recorded after the break.
    assert!(ok(&read_a_txt(&sb)).contains("the content"));
    let entries = std::fs::read_to_string(&log).expect("log");
    let lines: Vec<&str> = entries.lines().collect();
    assert_eq!(lines.len(), 2, "{entries}");
    assert!(
        lines[0].contains(r#""capability":"audit:rotate""#),
        "{}",
        lines[0]
    );
    assert!(
        lines[0].contains(&format!(r#""target":"{name}""#)),
        "{}",
        lines[0]
    );
    assert!(
        lines[1].contains(r#""decision":"granted:allowlist""#),
        "{}",
        lines[1]
    );
    ok(&sb.agent(&["audit", "verify"]));
}
