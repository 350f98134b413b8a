//! One narrated test per row of the capability table and one per denial: for each permission,
//! what it unlocks, a use its grant covers, and a use refused with the exact message and the
//! audit entry; then each way a use is denied.

use std::path::Path;
use std::sync::Arc;

use agent_manifest::Permission;
use agent_store::{GrantRecord, Store, StoredDecision};

use super::{InterfaceNeed, ScopeKind, interface_need};
use crate::{
    AllowList, Answer, ApprovalRequest, Approver, AuditLog, GrantSource, Grants, Prospect, Verdict,
};

/// A non-interactive run of `skill` granted `flags`, with its audit log in `dir`.
fn run(dir: &Path, flags: &[&str]) -> Grants {
    let audit = Arc::new(AuditLog::open(dir.join("audit.log")).unwrap());
    Grants::non_interactive(AllowList::from_flags(flags).unwrap(), audit)
}

fn decisions(dir: &Path) -> Vec<String> {
    AuditLog::entries(dir.join("audit.log"))
        .unwrap()
        .into_iter()
        .map(|e| format!("{} {} {} {}", e.skill, e.capability, e.target, e.decision))
        .collect()
}

/// The row of `permission`: its interfaces and scope kind; then `flag` grants `covered` and
/// the run refuses `refused` with exactly `message`, and the audit log says so.
fn row(
    permission: Permission,
    interfaces: &[&str],
    scope: ScopeKind,
    flag: &str,
    covered: Option<&str>,
    refused: Option<&str>,
    message: &str,
) {
    let row = permission.capability();
    assert_eq!(row.interfaces, interfaces, "{permission}");
    assert_eq!(row.scope, scope, "{permission}");
    for iface in interfaces {
        assert_eq!(interface_need(iface), InterfaceNeed::Permission(permission));
    }
    let tmp = tempfile::tempdir().unwrap();
    let grants = run(tmp.path(), &[flag]);
    assert_eq!(
        grants.check("s", true, permission, covered, "use"),
        Verdict::Granted {
            source: GrantSource::AllowList
        },
        "{flag} covers {covered:?}"
    );
    let skill = if refused == covered { "t" } else { "s" };
    assert_eq!(
        grants.check(skill, true, permission, refused, "use"),
        Verdict::Denied {
            reason: message.to_string()
        }
    );
    assert_eq!(
        decisions(tmp.path()),
        [
            format!("s {permission} use granted:allowlist"),
            format!("{skill} {permission} use denied:not-allowed"),
        ]
    );
}

#[test]
fn file_read_mounts_the_project_read_only_and_is_granted_as_a_whole() {
    assert!(Permission::FileRead.capability().wasi.contains("read-only"));
    // A grant for one skill is not a grant for another.
    row(
        Permission::FileRead,
        &[],
        ScopeKind::Whole,
        "s/file:read",
        None,
        None,
        "t was not granted file:read in this non-interactive run; grant it with --allow t/file:read",
    );
}

#[test]
fn file_write_mounts_the_project_read_write_and_file_read_does_not_cover_it() {
    assert!(
        Permission::FileWrite
            .capability()
            .wasi
            .contains("read-write")
    );
    row(
        Permission::FileWrite,
        &[],
        ScopeKind::Whole,
        "s/file:write",
        None,
        None,
        "t was not granted file:write in this non-interactive run; grant it with --allow t/file:write",
    );
    let tmp = tempfile::tempdir().unwrap();
    let grants = run(tmp.path(), &["file:read"]);
    assert!(
        !grants
            .check("s", true, Permission::FileWrite, None, "")
            .is_granted()
    );
}

#[test]
fn shell_exec_unlocks_exec_and_a_program_grant_covers_that_program_only() {
    row(
        Permission::ShellExec,
        &["exec"],
        ScopeKind::Program,
        "shell:exec:git",
        Some("git"),
        Some("rm"),
        "s was not granted shell:exec (rm) in this non-interactive run; grant it with --allow s/shell:exec:rm",
    );
}

#[test]
fn net_fetch_unlocks_http_and_an_origin_grant_covers_that_origin_however_spelt() {
    row(
        Permission::NetFetch,
        &["http"],
        ScopeKind::Origin,
        "net:fetch:https://api.example.com",
        Some("https://API.Example.com.:443/v1/pods"),
        Some("https://api.example.com@evil.example/"),
        "s was not granted net:fetch (https://api.example.com@evil.example/) in this non-interactive run; grant it with --allow s/net:fetch:https://evil.example",
    );
}

#[test]
fn net_fetch_origins_are_compared_normalised_and_others_refused() {
    let tmp = tempfile::tempdir().unwrap();
    let grants = run(
        tmp.path(),
        &[
            "net:fetch:https://api.example.com",
            "net:fetch:http://[::1]:8080",
            "net:fetch:https://bücher.example",
        ],
    );
    let allowed = |url: &str| {
        grants
            .would_grant("s", None, true, Permission::NetFetch, Some(url))
            .eq(&Prospect::Granted {
                source: GrantSource::AllowList,
            })
    };
    // The same origin, however spelt.
    for url in [
        "https://api.example.com/",
        "HTTPS://API.EXAMPLE.COM",
        "https://api.example.com:443/x?y#z",
        "https://api.example.com./",
        "https://user:pw@api.example.com/",
        "http://[0:0:0:0:0:0:0:1]:8080/",
        "https://xn--bcher-kva.example/",
        "https://BÜCHER.example/",
    ] {
        assert!(allowed(url), "{url} is the granted origin");
    }
    // Another port, scheme or host; a lookalike; user-info and path tricks.
    for url in [
        "https://api.example.com:8443/",
        "http://api.example.com/",
        "https://example.com/",
        "https://api.example.com.evil.test/",
        "https://\u{430}pi.example.com/",
        "https://api.example.com@evil.test/",
        "https://evil.test/@api.example.com",
        "https://evil.test\\@api.example.com",
        "http://[::1]/",
        "not a url",
    ] {
        assert!(!allowed(url), "{url} is another origin");
    }
    // A grant spelt with user info is refused where it is written: it would name another host.
    let err = crate::AllowEntry::parse("net:fetch:https://api.example.com@evil.test")
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("user info is not part of an origin: it names `https://evil.test`"),
        "{err}"
    );
}

#[test]
fn llm_call_unlocks_llm_as_a_whole() {
    row(
        Permission::LlmCall,
        &["llm"],
        ScopeKind::Whole,
        "s/llm:call",
        None,
        None,
        "t was not granted llm:call in this non-interactive run; grant it with --allow t/llm:call",
    );
}

#[test]
fn git_read_unlocks_git_as_a_whole() {
    row(
        Permission::GitRead,
        &["git"],
        ScopeKind::Whole,
        "s/git:read",
        None,
        None,
        "t was not granted git:read in this non-interactive run; grant it with --allow t/git:read",
    );
}

#[test]
fn git_write_unlocks_git_write_and_git_read_does_not_cover_it() {
    row(
        Permission::GitWrite,
        &["git-write"],
        ScopeKind::Whole,
        "s/git:write",
        None,
        None,
        "t was not granted git:write in this non-interactive run; grant it with --allow t/git:write",
    );
    let tmp = tempfile::tempdir().unwrap();
    let grants = run(tmp.path(), &["git:read"]);
    assert!(
        !grants
            .check("s", true, Permission::GitWrite, None, "")
            .is_granted()
    );
}

#[test]
fn env_read_puts_named_variables_in_the_environment_one_name_per_grant() {
    assert!(
        Permission::EnvRead
            .capability()
            .wasi
            .contains("environment")
    );
    row(
        Permission::EnvRead,
        &[],
        ScopeKind::EnvName,
        "env:read:KUBECONFIG",
        Some("KUBECONFIG"),
        Some("HOME"),
        "s was not granted env:read (HOME) in this non-interactive run; grant it with --allow s/env:read:HOME",
    );
}

#[test]
fn env_write_passes_named_variables_to_programs_one_name_per_grant() {
    row(
        Permission::EnvWrite,
        &[],
        ScopeKind::EnvName,
        "env:write:PGPASSWORD",
        Some("PGPASSWORD"),
        Some("PGUSER"),
        "s was not granted env:write (PGUSER) in this non-interactive run; grant it with --allow s/env:write:PGUSER",
    );
}

#[test]
fn skill_invoke_unlocks_skills_one_callee_per_grant() {
    row(
        Permission::SkillInvoke,
        &["skills"],
        ScopeKind::SkillName,
        "skill:invoke:git",
        Some("git"),
        Some("deploy"),
        "s was not granted skill:invoke (deploy) in this non-interactive run; grant it with --allow s/skill:invoke:deploy",
    );
}

// ---------------------------------------------------------------------------
// Denials

/// Answers every question with `answer`, counting them.
struct Fixed(Answer, std::sync::atomic::AtomicUsize);

impl Approver for Fixed {
    fn ask(&self, _: &ApprovalRequest) -> Answer {
        self.1.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
        self.0
    }
}

fn interactive(dir: &Path, answer: Answer) -> (Grants, Arc<Store>, Arc<Fixed>) {
    let store = Arc::new(Store::open(dir.join("agent.redb")).unwrap());
    let audit = Arc::new(AuditLog::open(dir.join("audit.log")).unwrap());
    let approver = Arc::new(Fixed(answer, 0.into()));
    (
        Grants::interactive(store.clone(), approver.clone(), audit),
        store,
        approver,
    )
}

#[test]
fn denial_undeclared_a_permission_the_manifest_does_not_declare_is_refused_even_when_allowed() {
    let tmp = tempfile::tempdir().unwrap();
    let grants = run(tmp.path(), &["shell:exec"]);
    assert_eq!(
        grants.check("s", false, Permission::ShellExec, Some("git"), "run `git`"),
        Verdict::Denied {
            reason: "s did not declare shell:exec in its manifest".into()
        }
    );
    assert_eq!(
        decisions(tmp.path()),
        ["s shell:exec run `git` denied:undeclared"]
    );
}

#[test]
fn denial_not_allowed_a_non_interactive_run_refuses_what_no_flag_grants_and_names_the_flag() {
    let tmp = tempfile::tempdir().unwrap();
    let grants = run(tmp.path(), &[]);
    assert_eq!(
        grants.check("s", true, Permission::LlmCall, None, "complete"),
        Verdict::Denied {
            reason: "s was not granted llm:call in this non-interactive run; grant it with --allow s/llm:call".into()
        }
    );
    let denials = grants.denials();
    assert_eq!(denials[0].allow_flag.as_deref(), Some("s/llm:call"));
    assert_eq!(
        decisions(tmp.path()),
        ["s llm:call complete denied:not-allowed"]
    );
}

#[test]
fn denial_user_the_user_answers_deny() {
    let tmp = tempfile::tempdir().unwrap();
    let (grants, store, _) = interactive(tmp.path(), Answer::Deny);
    assert_eq!(
        grants.check("s", true, Permission::GitWrite, None, "git commit"),
        Verdict::Denied {
            reason: "the user denied git:write to s".into()
        }
    );
    assert_eq!(
        store
            .grant("s", Permission::GitWrite)
            .unwrap()
            .unwrap()
            .decision,
        StoredDecision::Deny
    );
    assert_eq!(
        decisions(tmp.path()),
        ["s git:write git commit denied:user"]
    );
}

#[test]
fn denial_stored_a_stored_deny_refuses_without_asking_and_says_how_to_undo_it() {
    let tmp = tempfile::tempdir().unwrap();
    let (grants, store, approver) = interactive(tmp.path(), Answer::Always);
    store
        .put_grant(&GrantRecord::new(
            "s",
            Permission::LlmCall,
            StoredDecision::Deny,
            None,
            None,
        ))
        .unwrap();
    assert_eq!(
        grants.check("s", true, Permission::LlmCall, None, "complete"),
        Verdict::Denied {
            reason: "llm:call was denied to s earlier (undo with `agent skill permissions s --revoke llm:call`)".into()
        }
    );
    assert_eq!(approver.1.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert_eq!(decisions(tmp.path()), ["s llm:call complete denied:stored"]);
}

#[test]
fn would_grant_has_no_side_effects() {
    let tmp = tempfile::tempdir().unwrap();
    // Interactive: a question would be asked, but nobody is; nothing is stored or audited.
    let (grants, store, approver) = interactive(tmp.path(), Answer::Always);
    let log = tmp.path().join("audit.log");
    let before = std::fs::read(&log).unwrap();
    assert_eq!(
        grants.would_grant("s", None, true, Permission::ShellExec, Some("git")),
        Prospect::Ask
    );
    assert_eq!(
        grants.would_grant("s", None, false, Permission::ShellExec, Some("git")),
        Prospect::Denied {
            reason: "s did not declare shell:exec in its manifest".into()
        }
    );
    assert_eq!(approver.1.load(std::sync::atomic::Ordering::SeqCst), 0);
    assert!(store.grant("s", Permission::ShellExec).unwrap().is_none());
    assert_eq!(std::fs::read(&log).unwrap(), before);
    assert!(grants.denials().is_empty());
    // The real check then asks, stores and audits: would_grant foresaw a question.
    assert!(
        grants
            .check("s", true, Permission::ShellExec, Some("git"), "run `git`")
            .is_granted()
    );
    assert_eq!(approver.1.load(std::sync::atomic::Ordering::SeqCst), 1);
    assert_eq!(
        grants.would_grant("s", None, true, Permission::ShellExec, Some("git")),
        Prospect::Granted {
            source: GrantSource::Stored
        }
    );

    // Non-interactive: the refusal is foreseen with its message, and not remembered.
    let tmp = tempfile::tempdir().unwrap();
    let grants = run(tmp.path(), &["net:fetch:https://api.example.com"]);
    let before = std::fs::read(tmp.path().join("audit.log")).unwrap();
    assert_eq!(
        grants.would_grant("s", None, true, Permission::NetFetch, Some("https://evil.test/")),
        Prospect::Denied {
            reason: "s was not granted net:fetch (https://evil.test/) in this non-interactive run; grant it with --allow s/net:fetch:https://evil.test".into()
        }
    );
    assert_eq!(std::fs::read(tmp.path().join("audit.log")).unwrap(), before);
    assert!(grants.denials().is_empty());
}
