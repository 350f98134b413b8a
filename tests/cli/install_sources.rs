//! What `agent skill install` accepts (issue 15): the spec's own example
//! `agent skill install github.com/OWNER/REPO` is a git repository, not a local path; an
//! unsigned directory is refused at install rather than installed to be refused at every load.
//!
//! Nothing here leaves the machine: git's own `url.<base>.insteadOf` configuration, given
//! through the documented `GIT_CONFIG_COUNT`/`GIT_CONFIG_KEY_n`/`GIT_CONFIG_VALUE_n`
//! environment, rewrites `https://github.com/` to a `git daemon` on 127.0.0.1, and
//! `GIT_ALLOW_PROTOCOL=git` makes git refuse any other transport, so a broken rewrite fails
//! instead of reaching the network.

use std::path::Path;
use std::process::Output;

use agent_tests::{Sandbox, text};

use super::registry::{GitDaemon, Publisher, commit, git, only, s};
use super::{code, ok, sandbox};

/// Runs the binary with git's clones of `https://github.com/` going to `daemon`.
fn agent_via_daemon(sb: &Sandbox, daemon: &GitDaemon, args: &[&str]) -> Output {
    sb.agent_cmd(args)
        .env("GIT_CONFIG_COUNT", "1")
        .env(
            "GIT_CONFIG_KEY_0",
            format!("url.git://127.0.0.1:{}/.insteadOf", daemon.port),
        )
        .env("GIT_CONFIG_VALUE_0", "https://github.com/")
        .env("GIT_ALLOW_PROTOCOL", "git")
        .output()
        .expect("running agent")
}

/// A signed rust-hello 0.3.0 committed (and tagged `v0.3.0`) in a bare repository served
/// as `OWNER/REPO` by a git daemon on 127.0.0.1.
fn served_skill(sb: &Sandbox) -> GitDaemon {
    let publisher = Publisher::new(sb);
    let (manifest, component) = publisher.source("0.3.0", "");
    ok(&sb.agent(&["skill", "sign", s(&component), "--key", s(&publisher.key)]));
    let dir = manifest.parent().expect("dir");
    git(dir, &["init", "-q"]);
    commit(dir, "rust-hello 0.3.0");
    git(dir, &["tag", "v0.3.0"]);
    let served = sb.home.path().join("served");
    std::fs::create_dir_all(served.join("OWNER")).expect("mkdir");
    git(
        dir,
        &["clone", "-q", "--bare", ".", s(&served.join("OWNER/REPO"))],
    );
    GitDaemon::start(&served)
}

#[test]
fn a_forge_shorthand_installs_from_git() {
    let sb = sandbox();
    let daemon = served_skill(&sb);
    let user_dir = sb.paths().user_skills_dir();

    // The spec's spelling: host/owner/repo, no scheme. Before, this was read as a local path
    // ("github.com/OWNER/REPO/SKILL.yaml: not found").
    let out = agent_via_daemon(&sb, &daemon, &["skill", "install", "github.com/OWNER/REPO"]);
    assert!(
        ok(&out).contains("installed rust-hello 0.3.0"),
        "{:?}",
        text(&out)
    );
    assert!(!user_dir.join("rust-hello/.git").exists());
    only(&user_dir, &["rust-hello"]);
    ok(&sb.agent(&["skill", "remove", "rust-hello"]));

    // The repository page URL, with a tag to check out.
    let out = agent_via_daemon(
        &sb,
        &daemon,
        &["skill", "install", "https://github.com/OWNER/REPO#v0.3.0"],
    );
    assert!(
        ok(&out).contains("installed rust-hello 0.3.0"),
        "{:?}",
        text(&out)
    );
    ok(&sb.agent(&["skill", "remove", "rust-hello"]));

    // A repository that is not there: the error names the git URL that was tried.
    let out = agent_via_daemon(&sb, &daemon, &["skill", "install", "github.com/OWNER/NONE"]);
    assert!(!out.status.success(), "{:?}", text(&out));
    assert!(
        text(&out).1.contains("https://github.com/OWNER/NONE"),
        "{:?}",
        text(&out)
    );

    // A path spelt as one stays a local path, even when it also reads as a forge repository.
    let local = sb.home.path().join("work");
    std::fs::create_dir_all(local.join("github.com/OWNER")).expect("mkdir");
    let out = sb
        .agent_cmd(&["skill", "install", "./github.com/OWNER/REPO"])
        .current_dir(&local)
        .output()
        .expect("running agent");
    assert!(!out.status.success(), "{:?}", text(&out));
    assert!(
        !text(&out).1.contains("https://github.com"),
        "{:?}",
        text(&out)
    );
    assert!(!Path::new(&user_dir.join("rust-hello")).exists());
    drop(daemon);
}

/// `agent skill install ./dir --allow-unsigned` used to install an unsigned skill that every
/// later load refused (--allow-unsigned never applies to installed skills): a skill that could
/// never be used. The install is now refused, saying why and what to do, and nothing is
/// installed; what it suggests for development (`--allow-unsigned --skills DIR`) works, and
/// the signed skill installs and loads.
#[test]
fn an_unsigned_directory_is_refused_at_install_with_what_to_do() {
    let sb = sandbox();
    let publisher = Publisher::new(&sb);
    let (manifest, component) = publisher.source("0.3.0", "");
    let dir = manifest.parent().expect("dir");
    let user_dir = sb.paths().user_skills_dir();

    for flags in [&["--allow-unsigned"][..], &[][..]] {
        let mut args = flags.to_vec();
        args.extend(["skill", "install", s(dir)]);
        let out = sb.agent(&args);
        assert_eq!(code(&out), 1, "{args:?}: {:?}", text(&out));
        let stderr = text(&out).1;
        assert!(
            stderr.contains("skill `rust-hello`")
                && stderr.contains("is not signed")
                && stderr.contains("--allow-unsigned never applies to installed skills")
                && stderr.contains("agent skill build")
                && stderr.contains("agent --allow-unsigned --skills"),
            "{args:?}: {stderr}"
        );
        assert!(!user_dir.join("rust-hello").exists(), "{args:?}");
        only(&user_dir, &[]);
    }

    // The development route the message names loads it, unsigned, from where it is.
    let out = sb.agent(&["--allow-unsigned", "--skills", s(dir), "skill", "list"]);
    let list = ok(&out);
    assert!(list.lines().any(|l| l.starts_with("rust-hello")), "{list}");

    // Signed, it installs and loads without any flag.
    ok(&sb.agent(&["skill", "sign", s(&component), "--key", s(&publisher.key)]));
    let out = sb.agent(&["skill", "install", s(dir)]);
    assert!(
        ok(&out).contains("installed rust-hello 0.3.0"),
        "{:?}",
        text(&out)
    );
    let out = sb.agent(&["skill", "list"]);
    let list = ok(&out);
    assert!(
        list.lines()
            .any(|l| l.starts_with("rust-hello") && l.contains("0.3.0")),
        "{list}"
    );
    assert!(!text(&out).1.contains("rust-hello"), "{:?}", text(&out));
}
