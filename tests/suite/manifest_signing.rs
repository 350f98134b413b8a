//! The signature covers the manifest: a skill cannot be widened by editing
//! its `SKILL.yaml` (or a schema, prompt or rule file it names) after it was
//! signed, stored grants are bound to the manifest they were given for, and
//! agent 0.1.0's component-only signatures are refused with a way out.
//!
//! The hostile guest is `guest-self-edit`: with `file:write` it drops lines
//! of its own manifest (`exec: [echo]`), hoping to run any program next time.

use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};

use agent_policy::{AllowList, Answer, ApprovalRequest, Approver, AuditLog, Grants};
use agent_runtime::{
    CallContext, GrantsAuthorizer, LoadError, Origin, Runtime, Signer, Skill, SkillPackage,
    TrustPolicy,
};
use agent_store::{GrantRecord, Store, StoredDecision};
use agent_tests::{sign_legacy_v1, write_skill};
use agent_trust::TrustError;
use serde_json::json;

use crate::common::{Harness, guest};

const NAME: &str = "self-edit";

/// The self-editing skill's manifest: `extra` after the standard fields.
fn manifest(extra: &str) -> String {
    format!(
        "name: {NAME}\nversion: 0.1.0\ndescription: rewrites its own manifest\ntypes: [tool]\nimplementation:\n  component: skill.wasm\n{extra}"
    )
}

/// Writes the self-editing skill into `root/self-edit`, signed by the
/// harness's trusted key.
fn install(h: &Harness, root: &Path, extra: &str) -> PathBuf {
    write_skill(
        &root.join(NAME),
        &manifest(extra),
        &guest("guest-self-edit"),
        Some(&h.key),
    )
}

fn load(h: &Harness, dir: &Path, origin: Origin) -> Result<Skill, LoadError> {
    let pkg = SkillPackage::from_dir(dir, origin)?;
    h.runtime.load(pkg, &h.trust)
}

/// Expects a signature refusal because `file` changed; returns the message.
fn refused_naming(result: Result<Skill, LoadError>, file: &str) -> String {
    let err = match result {
        Err(err) => err,
        Ok(skill) => panic!("expected a refusal, but {skill:?} loaded"),
    };
    let message = err.to_string();
    println!("refused: {message}");
    match &err {
        LoadError::Signature {
            skill,
            source: TrustError::FileChanged { path, .. },
        } => {
            assert_eq!(skill, NAME);
            assert_eq!(path, file, "{message}");
        }
        other => panic!("expected a changed-file refusal, got {other:?}"),
    }
    assert!(
        message.starts_with(&format!(
            "skill `{NAME}` refused: {file} changed after it was signed"
        )),
        "{message}"
    );
    assert!(message.contains("agent skill install"), "{message}");
    assert!(message.contains("agent skill sign"), "{message}");
    message
}

#[tokio::test]
async fn deleting_the_exec_line_of_an_installed_manifest_is_refused_at_load() {
    // An installed (user) skill may run `echo` only.
    let h = Harness::new(&["shell:exec"]);
    let user_dir = h.sandbox.paths().user_skills_dir();
    let dir = install(&h, &user_dir, "permissions: [shell:exec]\nexec: [echo]\n");
    let skill = load(&h, &dir, Origin::User).expect("the signed skill loads");
    assert_eq!(skill.signer, Signer::Key(h.key.public().id().to_string()));
    let marker = h.project().join("pwned");
    let err = h
        .call(
            &skill,
            "run",
            json!({"program": "touch", "args": ["pwned"]}),
        )
        .await
        .expect("no host error");
    println!("touch under exec: [echo]: {err:?}");
    assert!(err.is_err(), "touch must be refused: {err:?}");
    assert!(!marker.exists());

    // Someone deletes its `exec: [echo]` line: under the same grant it
    // would now run any program.
    let yaml = dir.join("SKILL.yaml");
    let edited = std::fs::read_to_string(&yaml)
        .expect("manifest")
        .replace("exec: [echo]\n", "");
    std::fs::write(&yaml, edited).expect("edit the manifest");
    let entries_before = h.audit().len();

    let message = refused_naming(load(&h, &dir, Origin::User), "SKILL.yaml");
    assert!(message.contains("its sha256 is"), "{message}");
    // Refused before anything ran: no new audit entry, no marker.
    assert_eq!(h.audit().len(), entries_before);
    assert!(!marker.exists());
}

#[tokio::test]
async fn a_project_skill_rewriting_its_own_manifest_is_refused_at_its_next_load() {
    let h = Harness::new(&["file:write", "shell:exec"]);
    let skills_dir = h.project().join(".agent").join("skills");
    let dir = install(
        &h,
        &skills_dir,
        "permissions: [file:write, shell:exec]\nexec: [echo]\n",
    );
    let skill = load(&h, &dir, Origin::Project).expect("the signed project skill loads");

    // Through WASI, the skill drops its own `exec:` line. (The host may
    // already refuse to let a skill write `.agent/skills/`; either way the
    // test also makes the edit from the host, as a user or another tool
    // could.)
    let through_wasi = h
        .call(
            &skill,
            "drop_line",
            json!({"path": format!("/project/.agent/skills/{NAME}/SKILL.yaml"), "prefix": "exec:"}),
        )
        .await
        .expect("no host error");
    println!("the skill's own edit: {through_wasi:?}");
    let yaml = dir.join("SKILL.yaml");
    let text = std::fs::read_to_string(&yaml).expect("manifest");
    if text.contains("exec: [echo]") {
        std::fs::write(&yaml, text.replace("exec: [echo]\n", "")).expect("host-side edit");
    }
    assert!(
        !std::fs::read_to_string(&yaml)
            .expect("manifest")
            .contains("exec:")
    );

    // Its next load is refused, naming SKILL.yaml; `touch` never runs.
    refused_naming(load(&h, &dir, Origin::Project), "SKILL.yaml");
    assert!(!h.project().join("pwned").exists());
}

#[test]
fn an_edited_schema_prompt_or_rule_file_is_refused_naming_it() {
    let h = Harness::new(&[]);
    let files = [
        ("schemas/run.json", r#"{"type":"object"}"#),
        ("PROMPT.md", "Be careful.\n"),
        ("rules.yaml", "rules: []\n"),
    ];
    let extra = "permissions: [shell:exec]\nexec: [echo]\ntypes: [tool, prompt]\ntools:\n  - name: run\n    description: run\n    input_schema_file: schemas/run.json\nprompt:\n  system_prompt_file: PROMPT.md\n";
    let write_all = |dir: &Path| {
        for (rel, content) in files {
            let path = dir.join(rel);
            std::fs::create_dir_all(path.parent().expect("parent")).expect("mkdir");
            std::fs::write(path, content).expect("write");
        }
    };
    let with_types = |extra: &str| manifest(extra).replace("types: [tool]\n", "");

    // A tool + prompt skill naming a schema and a prompt file.
    let dir = h.sandbox.home.path().join("skills-c").join(NAME);
    std::fs::create_dir_all(&dir).expect("mkdir");
    write_all(&dir);
    write_skill(
        &dir,
        &with_types(extra),
        &guest("guest-self-edit"),
        Some(&h.key),
    );
    load(&h, &dir, Origin::User).expect("intact, it loads");
    for (rel, content) in &files[..2] {
        std::fs::write(dir.join(rel), format!("{content} ")).expect("edit");
        refused_naming(load(&h, &dir, Origin::User), rel);
        std::fs::write(dir.join(rel), content).expect("restore");
        load(&h, &dir, Origin::User).expect("restored, it loads again");
    }

    // A symbolic link with the same bytes is refused: signed files must be
    // regular files inside the skill directory.
    let outside = h.sandbox.home.path().join("outside.json");
    std::fs::write(&outside, files[0].1).expect("outside copy");
    std::fs::remove_file(dir.join(files[0].0)).expect("remove schema");
    std::os::unix::fs::symlink(&outside, dir.join(files[0].0)).expect("symlink");
    let message = refused_naming(load(&h, &dir, Origin::User), files[0].0);
    assert!(message.contains("symbolic link"), "{message}");

    // A security-rule skill's rule file: the signature check runs first, so
    // the edit is what is reported (intact, the skill loads: its
    // `sast_rules_file` satisfies the `security-rule` type without a
    // scanner export).
    let rules_dir = h.sandbox.home.path().join("skills-r").join(NAME);
    std::fs::create_dir_all(&rules_dir).expect("mkdir");
    write_all(&rules_dir);
    write_skill(
        &rules_dir,
        &with_types(
            "permissions: [shell:exec]\nexec: [echo]\ntypes: [tool, security-rule]\nsecurity_rules:\n  sast_rules_file: rules.yaml\n",
        ),
        &guest("guest-self-edit"),
        Some(&h.key),
    );
    if let Err(e) = load(&h, &rules_dir, Origin::User) {
        panic!("intact, the skill loads (its rules file stands in for a scanner): {e}");
    }
    std::fs::write(rules_dir.join("rules.yaml"), "rules: [{id: x}]\n").expect("edit rules");
    refused_naming(load(&h, &rules_dir, Origin::User), "rules.yaml");
}

#[test]
fn a_component_signed_in_the_0_1_0_format_gets_the_reinstall_message() {
    let h = Harness::new(&[]);
    let dir = h.sandbox.paths().user_skills_dir().join(NAME);
    write_skill(
        &dir,
        &manifest("permissions: [shell:exec]\nexec: [echo]\n"),
        &sign_legacy_v1(&guest("guest-self-edit"), &h.key),
        None,
    );
    let err = load(&h, &dir, Origin::User).expect_err("a 0.1.0 signature is refused");
    let message = err.to_string();
    println!("refused: {message}");
    match &err {
        LoadError::Signature {
            source: TrustError::LegacyFormat { key_id },
            ..
        } => assert_eq!(*key_id, h.key.public().id()),
        other => panic!("expected the legacy-format refusal, got {other:?}"),
    }
    assert!(
        message.contains("signed (key ") && message.contains("in the old format of agent 0.1.0"),
        "{message}"
    );
    assert!(message.contains("does not cover SKILL.yaml"), "{message}");
    assert!(
        message.contains("re-install it (`agent skill install"),
        "{message}"
    );
    assert!(
        message.contains("re-sign it (`agent skill sign"),
        "{message}"
    );
    // Not even --allow-unsigned accepts it, from a development path.
    let pkg = SkillPackage::from_dir(&dir, Origin::Path).expect("package");
    let trust = TrustPolicy {
        allow_unsigned: true,
        ..h.trust.clone()
    };
    assert!(matches!(
        h.runtime.load(pkg, &trust),
        Err(LoadError::Signature {
            source: TrustError::LegacyFormat { .. },
            ..
        })
    ));
}

/// Answers every question with `answer` and counts them.
struct Counting {
    answer: Answer,
    asked: AtomicUsize,
}

impl Counting {
    fn new(answer: Answer) -> Arc<Counting> {
        Arc::new(Counting {
            answer,
            asked: AtomicUsize::new(0),
        })
    }
    fn asked(&self) -> usize {
        self.asked.load(Ordering::SeqCst)
    }
}

impl Approver for Counting {
    fn ask(&self, req: &ApprovalRequest) -> Answer {
        println!("asked: {} {} {:?}", req.skill, req.permission, req.scope);
        self.asked.fetch_add(1, Ordering::SeqCst);
        self.answer
    }
}

/// A fresh process's view: interactive grants over `store`, asking
/// `approver`, and a call context for the harness's project.
fn interactive(h: &Harness, store: &Arc<Store>, approver: Arc<Counting>) -> Arc<CallContext> {
    let audit = Arc::new(AuditLog::open(h.sandbox.paths().audit_log_path()).expect("audit"));
    let grants = Grants::interactive(Arc::clone(store), approver, audit);
    let authorizer = Arc::new(GrantsAuthorizer::new(Arc::new(grants)));
    Arc::new(CallContext::new(h.project(), "cli", authorizer).expect("context"))
}

async fn run_echo(h: &Harness, skill: &Skill, ctx: &Arc<CallContext>) -> String {
    let (out, _) = h
        .runtime
        .call_tool(skill, ctx, "run", &json!({"program": "echo"}).to_string())
        .await
        .expect("no host error");
    match out {
        Ok(out) => out.text,
        Err(e) => format!("refused: {e:?}"),
    }
}

/// The last audit decision for the skill's `shell:exec`.
fn last_exec_decision(h: &Harness) -> String {
    h.audit_of(NAME)
        .into_iter()
        .rfind(|(cap, _, d)| {
            cap == "shell:exec" && (d.starts_with("granted:") || d.starts_with("denied:"))
        })
        .map(|(_, _, d)| d)
        .unwrap_or_default()
}

#[tokio::test]
async fn a_stored_grant_does_not_carry_over_to_a_re_signed_manifest_that_declares_more() {
    let h = Harness::new(&[]);
    let store = Arc::new(Store::open(h.sandbox.paths().db_path()).expect("store"));
    let user_dir = h.sandbox.paths().user_skills_dir();
    let dir = install(&h, &user_dir, "permissions: [shell:exec]\nexec: [echo]\n");

    // Manifest A: the user answers "always".
    let a = load(&h, &dir, Origin::User).expect("A loads");
    let always = Counting::new(Answer::Always);
    let out = run_echo(&h, &a, &interactive(&h, &store, always.clone())).await;
    assert_eq!(always.asked(), 1, "{out}");
    let record = store
        .grant(NAME, agent_manifest::Permission::ShellExec)
        .expect("read")
        .expect("stored");
    assert_eq!(
        record.manifest_sha256.as_deref(),
        Some(a.manifest_digest.as_str())
    );

    // The same manifest in a new process: the stored answer applies.
    let never = Counting::new(Answer::Deny);
    let out = run_echo(&h, &a, &interactive(&h, &store, never.clone())).await;
    assert_eq!(never.asked(), 0, "{out}");
    assert_eq!(last_exec_decision(&h), "granted:stored");

    // An update, legitimately re-signed by the trusted publisher, declares
    // more (`touch` too). The answer given for A does not apply to it.
    write_skill(
        &dir,
        &manifest("permissions: [shell:exec]\nexec: [echo, touch]\n"),
        &guest("guest-self-edit"),
        Some(&h.key),
    );
    let b = load(&h, &dir, Origin::User).expect("the re-signed B loads");
    assert_ne!(a.manifest_digest, b.manifest_digest);
    let once = Counting::new(Answer::Once);
    let out = run_echo(&h, &b, &interactive(&h, &store, once.clone())).await;
    assert_eq!(once.asked(), 1, "asked again for B: {out}");
    assert_eq!(last_exec_decision(&h), "granted:user-once");

    // In CI nothing stored applies; the refusal names the --allow flag.
    let audit = Arc::new(AuditLog::open(h.sandbox.paths().audit_log_path()).expect("audit"));
    let ci = Arc::new(Grants::non_interactive(AllowList::new(), audit));
    let ctx = Arc::new(
        CallContext::new(
            h.project(),
            "cli",
            Arc::new(GrantsAuthorizer::new(Arc::clone(&ci))),
        )
        .expect("context"),
    );
    let out = run_echo(&h, &b, &ctx).await;
    println!("CI: {out}");
    let denial = ci.denials().into_iter().next().expect("a denial");
    assert!(
        denial
            .reason
            .contains(&format!("grant it with --allow {NAME}/shell:exec")),
        "{}",
        denial.reason
    );

    // A grant stored before grants were bound to manifests applies to
    // nothing: the user is asked again.
    store
        .put_grant(&GrantRecord::new(
            NAME,
            agent_manifest::Permission::ShellExec,
            StoredDecision::Always,
            None,
            None,
        ))
        .expect("an old-style record");
    let again = Counting::new(Answer::Once);
    let out = run_echo(&h, &b, &interactive(&h, &store, again.clone())).await;
    assert_eq!(
        again.asked(),
        1,
        "an undigested grant must not apply: {out}"
    );
}

#[test]
fn builtins_verify_their_manifest_and_schemas_too() {
    let h = Harness::new(&[]);
    let runtime = Runtime::new(None, agent_runtime::Limits::default()).expect("runtime");
    let public = agent_builtins::public_key().expect("built-in key");
    let trust = TrustPolicy {
        builtin_key: Some(public),
        ..h.trust.clone()
    };
    for b in agent_builtins::all() {
        let skill = runtime
            .load(
                agent_tests::builtin_package(b.name, Origin::Builtin),
                &trust,
            )
            .unwrap_or_else(|e| panic!("{}: {e}", b.name));
        assert_eq!(skill.signer, Signer::Builtin(public.id().to_string()));
    }

    // The embedded schemas are covered: a changed one is refused.
    let mut pkg = agent_tests::builtin_package("core-tools", Origin::Builtin);
    assert!(!pkg.embedded.is_empty(), "core-tools names schemas");
    let (path, _) = pkg.embedded[0].clone();
    pkg.embedded[0].1 = Arc::from(&b"{\"type\":\"object\",\"additionalProperties\":true}"[..]);
    let err = runtime.load(pkg, &trust).expect_err("a changed schema");
    println!("refused: {err}");
    assert!(
        matches!(&err, LoadError::Signature { source: TrustError::FileChanged { path: p, .. }, .. } if *p == path),
        "{err:?}"
    );

    // And so is the manifest: one changed byte (a comment) is refused.
    let b = agent_builtins::all()
        .iter()
        .find(|b| b.name == "core-tools")
        .expect("core-tools");
    let edited = format!("{}# edited\n", b.manifest);
    let pkg = SkillPackage::in_memory(
        "<built-in>/core-tools/SKILL.yaml",
        &edited,
        b.named_files()
            .map(|(p, bytes)| (p.to_string(), Arc::from(bytes)))
            .collect(),
        Some(agent_runtime::ComponentBytes::Deflated(b.component)),
        Origin::Builtin,
    )
    .expect("the edited manifest still parses");
    let err = runtime.load(pkg, &trust).expect_err("a changed manifest");
    println!("refused: {err}");
    assert!(
        err.to_string()
            .contains("SKILL.yaml changed after it was signed"),
        "{err}"
    );
}
