//! A model passes the host's absolute path of a project file (`/home/u/proj/probe.txt`;
//! Claude Code's own Read tool requires absolute paths). core-tools used to refuse it ("use a
//! path relative to the project root, or an absolute path under /project"); the host now gives
//! the guest the project's host path with the mount (`AGENT_PROJECT_HOST_ROOT`) and the SDK
//! maps it onto `/project` (issue 15, item 14). Everything else stays refused exactly as
//! before: a sibling directory sharing the prefix, `..` out of the project, a symlink out,
//! other absolute paths, and a write without `file:write`.

use std::path::Path;
use std::process::Output;

use agent_tests::{Sandbox, text};

use super::{code, ok, sandbox, write};

fn call(sb: &Sandbox, tool: &str, allow: &str, input: serde_json::Value) -> Output {
    sb.agent(&[
        "skill",
        "call",
        "core-tools",
        tool,
        "--allow",
        allow,
        "--input",
        &input.to_string(),
    ])
}

/// A refused call: exit `expected` (1: invalid input, 4: denied by the sandbox) with a
/// message containing `needle`, and nothing of the secret in the output.
fn refused(out: &Output, expected: i32, needle: &str) {
    let (stdout, stderr) = text(out);
    assert_eq!(code(out), expected, "{stdout}\n{stderr}");
    assert!(stderr.contains(needle), "expected {needle:?} in:\n{stderr}");
    assert!(!stdout.contains("SECRET") && !stderr.contains("SECRET"));
}

#[test]
fn the_hosts_absolute_path_of_a_project_file_reads_writes_and_edits() {
    let sb = sandbox();
    // The project as the model sees it: its real, canonical host path.
    let root = sb.project.path().canonicalize().expect("canonical project");
    let abs = |rel: &str| format!("{}/{rel}", root.display());
    write(&root, "probe.txt", "probe line\n");

    let out = call(
        &sb,
        "read_file",
        "file:read",
        serde_json::json!({"path": abs("probe.txt")}),
    );
    assert!(ok(&out).contains("probe line"), "{:?}", text(&out));

    let out = call(
        &sb,
        "write_file",
        "file:write",
        serde_json::json!({"path": abs("sub/new.txt"), "content": "written\n"}),
    );
    ok(&out);
    assert_eq!(
        std::fs::read_to_string(root.join("sub/new.txt")).expect("written"),
        "written\n"
    );

    let out = call(
        &sb,
        "edit",
        "file:write",
        serde_json::json!({"path": abs("probe.txt"), "old": "probe", "new": "edited"}),
    );
    ok(&out);
    assert_eq!(
        std::fs::read_to_string(root.join("probe.txt")).expect("edited"),
        "edited line\n"
    );

    let out = call(
        &sb,
        "list_dir",
        "file:read",
        serde_json::json!({"path": abs("")}),
    );
    let listing = ok(&out);
    assert!(
        listing.contains("probe.txt") && listing.contains("sub"),
        "{listing}"
    );

    // Read-only grant: the host path does not widen it.
    let out = call(
        &sb,
        "write_file",
        "file:read",
        serde_json::json!({"path": abs("probe.txt"), "content": "x"}),
    );
    assert_ne!(code(&out), 0, "{:?}", text(&out));
    assert_eq!(
        std::fs::read_to_string(root.join("probe.txt")).expect("unchanged"),
        "edited line\n"
    );
}

#[test]
fn host_paths_outside_the_project_stay_refused() {
    let sb = sandbox();
    let root = sb.project.path().canonicalize().expect("canonical project");
    write(&root, "probe.txt", "probe line\n");
    // A sibling of the project whose name extends the project's: `<root>2/secret.txt`.
    let sibling = Path::new(&format!("{}2", root.display())).to_path_buf();
    write(&sibling, "secret.txt", "SECRET sibling\n");
    // A directory elsewhere, and a symlink to it inside the project.
    let outside = sb.home.path().join("outside");
    write(&outside, "secret.txt", "SECRET outside\n");
    std::os::unix::fs::symlink(&outside, root.join("link")).expect("symlink");
    let read = |path: String| {
        call(
            &sb,
            "read_file",
            "file:read",
            serde_json::json!({"path": path}),
        )
    };

    let out = read(format!("{}/secret.txt", sibling.display()));
    refused(&out, 1, "is outside the project");
    let out = read(format!(
        "{}/../{}2/secret.txt",
        root.display(),
        root.file_name().unwrap().to_string_lossy()
    ));
    refused(&out, 1, "leaves the project");
    let out = read(format!("{}/secret.txt", outside.display()));
    refused(&out, 1, "is outside the project");
    let out = read(format!("{}/link/secret.txt", root.display()));
    refused(&out, 4, "leads outside the project (through a symlink)");
    let out = call(
        &sb,
        "write_file",
        "file:write",
        serde_json::json!({"path": format!("{}/new.txt", sibling.display()), "content": "x"}),
    );
    refused(&out, 1, "is outside the project");
    assert!(!sibling.join("new.txt").exists());
    std::fs::remove_dir_all(&sibling).expect("clean the sibling");
}
