//! Signatures: every load path verifies the component before anything is
//! compiled; each way of getting it wrong is refused with a clear message.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use agent_policy::{AllowList, AuditLog, Grants};
use agent_runtime::{
    CacheOutcome, CallContext, GrantsAuthorizer, Limits, LoadError, Origin, Runtime, Signer, Skill,
    SkillPackage, TrustPolicy,
};
use agent_tests::{Sandbox, tool_manifest};
use agent_trust::{SecretKey, TrustError, TrustStore};
use serde_json::json;

use crate::common::hostile;

/// A sandbox with its own (empty) artifact cache, to see whether anything
/// was compiled.
struct SigEnv {
    sandbox: Sandbox,
    cache: tempfile::TempDir,
    runtime: Runtime,
}

impl SigEnv {
    fn new() -> SigEnv {
        let sandbox = Sandbox::new();
        let cache = tempfile::tempdir().expect("cache dir");
        let runtime = Runtime::new(
            Some(agent_tests::component_cache(
                cache.path().join("components"),
            )),
            Limits::default(),
        )
        .expect("runtime");
        SigEnv {
            sandbox,
            cache,
            runtime,
        }
    }

    /// The policy: the sandbox's trusted keys, no built-in key.
    fn trust(&self, allow_unsigned: bool) -> TrustPolicy {
        TrustPolicy {
            store: TrustStore::load(&self.sandbox.paths().trusted_keys_dir()).expect("store"),
            builtin_key: None,
            allow_unsigned,
        }
    }

    /// A package of `name` holding exactly `component`.
    fn package(&self, name: &str, component: &[u8], origin: Origin) -> SkillPackage {
        let dir = self.sandbox.home.path().join("skill-src").join(name);
        std::fs::create_dir_all(&dir).expect("mkdir");
        std::fs::write(dir.join("SKILL.yaml"), manifest_of(name)).expect("manifest");
        std::fs::write(dir.join("skill.wasm"), component).expect("component");
        SkillPackage::from_dir(&dir, origin).expect("package")
    }

    fn load(&self, pkg: SkillPackage, allow_unsigned: bool) -> Result<Skill, LoadError> {
        self.runtime.load(pkg, &self.trust(allow_unsigned))
    }

    /// A call context granting nothing.
    fn context(&self) -> Arc<CallContext> {
        self.sandbox.paths().ensure_dirs().expect("dirs");
        let audit = AuditLog::open(self.sandbox.paths().audit_log_path()).expect("audit log");
        let grants = Grants::non_interactive(AllowList::new(), Arc::new(audit));
        let authorizer = Arc::new(GrantsAuthorizer::new(Arc::new(grants)));
        Arc::new(CallContext::new(self.sandbox.project.path(), "cli", authorizer).expect("context"))
    }

    /// Compiled artifacts in the cache: none after a refusal.
    fn artifacts(&self) -> Vec<PathBuf> {
        artifacts_in(&self.cache.path().join("components"))
    }
}

fn artifacts_in(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(entries) => entries.filter_map(|e| e.ok().map(|e| e.path())).collect(),
        Err(_) => Vec::new(),
    }
}

/// The manifest [`SigEnv::package`] writes for `name`.
fn manifest_of(name: &str) -> String {
    tool_manifest(name, "permissions: [shell:exec]\n")
}

/// `component` signed together with the manifest [`SigEnv::package`] writes for `name`.
fn signed(name: &str, component: &[u8], key: &SecretKey) -> Vec<u8> {
    let files = [("SKILL.yaml".to_string(), manifest_of(name).into_bytes())];
    agent_trust::sign(component, &files, key.signing_key()).expect("sign")
}

/// Expects a signature refusal; returns the error's message and source.
fn refused(result: Result<Skill, LoadError>) -> (String, TrustError) {
    let err = match result {
        Err(err) => err,
        Ok(skill) => panic!("expected a refusal, but {skill:?} loaded"),
    };
    let message = err.to_string();
    println!("refused: {message}");
    match err {
        LoadError::Signature { source, .. } => (message, source),
        other => panic!("expected a signature refusal, got {other:?}"),
    }
}

#[test]
fn a_flipped_byte_is_a_bad_signature() {
    let env = SigEnv::new();
    let key = env.sandbox.trusted_key();
    let mut bytes = signed("flipped", &hostile(), &key);
    // Sanity: the intact bytes verify.
    agent_trust::verify(&bytes, |k| *k == key.public()).expect("intact bytes verify");
    let middle = bytes.len() / 2;
    bytes[middle] ^= 0x01;
    let (message, source) = refused(env.load(env.package("flipped", &bytes, Origin::Path), false));
    assert!(
        matches!(&source, TrustError::BadSignature { key_id } if *key_id == key.public().id()),
        "{source:?}"
    );
    assert!(
        message.starts_with("skill `flipped` refused: "),
        "{message}"
    );
    assert!(
        message.contains(&format!(
            "the signature (key {}) does not match the component",
            key.public().id()
        )),
        "{message}"
    );
    assert!(message.contains("changed after signing"), "{message}");
    // --allow-unsigned does not make a broken signature acceptable.
    let (_, source) = refused(env.load(env.package("flipped", &bytes, Origin::Path), true));
    assert!(matches!(source, TrustError::BadSignature { .. }));
    assert!(
        env.artifacts().is_empty(),
        "compiled: {:?}",
        env.artifacts()
    );
}

#[test]
fn a_signature_by_another_key_than_the_one_named_is_bad() {
    let env = SigEnv::new();
    let trusted = env.sandbox.trusted_key();
    let other = SecretKey::generate().expect("key");
    let mut bytes = signed("wrong-key", &hostile(), &other);
    // The block starts with: format byte, 32-byte public key, 64-byte signature
    // (then the signed file list).
    let name = agent_trust::signature::SECTION_NAME.as_bytes();
    let at = bytes
        .windows(name.len())
        .rposition(|w| w == name)
        .expect("signature section")
        + name.len()
        + 1;
    let key_bytes = &mut bytes[at..at + 32];
    assert_eq!(key_bytes, other.public().as_bytes(), "block layout");
    key_bytes.copy_from_slice(trusted.public().as_bytes());
    let (message, source) =
        refused(env.load(env.package("wrong-key", &bytes, Origin::Path), false));
    assert!(
        matches!(&source, TrustError::BadSignature { key_id } if *key_id == trusted.public().id()),
        "{source:?}"
    );
    assert!(
        message.contains(&format!(
            "the signature (key {}) does not match the component",
            trusted.public().id()
        )),
        "{message}"
    );
    assert!(message.contains("signed with another key"), "{message}");
    assert!(env.artifacts().is_empty());
}

#[test]
fn an_untrusted_key_is_refused_naming_it() {
    let env = SigEnv::new();
    let _trusted = env.sandbox.trusted_key();
    let stranger = SecretKey::generate().expect("key");
    let bytes = signed("stranger", &hostile(), &stranger);
    let id = stranger.public().id();
    let (message, source) = refused(env.load(env.package("stranger", &bytes, Origin::Path), false));
    assert!(
        matches!(&source, TrustError::UntrustedKey { key_id } if *key_id == id),
        "{source:?}"
    );
    assert!(
        message.contains(&format!("signed by key {id}, which you do not trust")),
        "{message}"
    );
    assert!(message.contains("agent keys trust"), "{message}");
    // Not even --allow-unsigned loads a signed, untrusted component.
    let (_, source) = refused(env.load(env.package("stranger", &bytes, Origin::Path), true));
    assert!(matches!(source, TrustError::UntrustedKey { .. }));
    assert!(env.artifacts().is_empty());
}

#[test]
fn an_unsigned_component_is_refused_without_allow_unsigned() {
    let env = SigEnv::new();
    let _trusted = env.sandbox.trusted_key();
    let (message, source) =
        refused(env.load(env.package("unsigned", &hostile(), Origin::Path), false));
    assert!(matches!(source, TrustError::Unsigned), "{source:?}");
    assert!(message.contains("is not signed"), "{message}");
    assert!(message.contains("--allow-unsigned"), "{message}");
    assert!(message.contains("agent skill sign"), "{message}");
    assert!(env.artifacts().is_empty());
}

#[test]
fn allow_unsigned_applies_to_local_paths_only() {
    let env = SigEnv::new();
    let skill = env
        .load(env.package("dev-skill", &hostile(), Origin::Path), true)
        .expect("an unsigned path skill loads under --allow-unsigned");
    assert_eq!(skill.signer, Signer::Unsigned);
    assert_eq!(
        skill.digest.as_deref(),
        Some(hex_digest(&hostile()).as_str())
    );

    for origin in [Origin::Project, Origin::CommandLine] {
        let skill = env
            .load(env.package("dev-skill", &hostile(), origin), true)
            .unwrap_or_else(|e| panic!("{origin:?}: {e}"));
        assert_eq!(skill.signer, Signer::Unsigned);
    }

    for (origin, word) in [(Origin::User, "user"), (Origin::Builtin, "builtin")] {
        let err = env
            .load(env.package("dev-skill", &hostile(), origin), true)
            .expect_err("an installed skill must be signed");
        let message = err.to_string();
        println!("refused: {message}");
        match &err {
            LoadError::UnsignedNotAllowed { skill, origin } => {
                assert_eq!(skill, "dev-skill");
                assert_eq!(*origin, word);
            }
            other => panic!("expected UnsignedNotAllowed, got {other:?}"),
        }
        assert!(message.contains("dev-skill` is unsigned"), "{message}");
        assert!(
            message.contains("--allow-unsigned applies only to local development paths"),
            "{message}"
        );
        assert!(
            message.contains(&format!("not to {word} skills")),
            "{message}"
        );
    }
}

fn hex_digest(bytes: &[u8]) -> String {
    agent_trust::sha256(bytes)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

#[tokio::test]
async fn a_trusted_signature_loads_and_the_second_load_hits_the_cache() {
    let env = SigEnv::new();
    let key = env.sandbox.trusted_key();
    let bytes = signed("signed-ok", &hostile(), &key);
    let id = key.public().id().to_string();

    let first = env
        .load(env.package("signed-ok", &bytes, Origin::User), false)
        .expect("a trusted signature loads");
    assert_eq!(first.signer, Signer::Key(id.clone()));
    assert_eq!(first.cache, Some(CacheOutcome::Compiled));
    // The digest is of the unsigned bytes.
    assert_eq!(
        first.digest.as_deref(),
        Some(hex_digest(&hostile()).as_str())
    );
    assert_eq!(env.artifacts().len(), 1, "{:?}", env.artifacts());

    let second = env
        .load(env.package("signed-ok", &bytes, Origin::User), false)
        .expect("second load");
    assert_eq!(second.signer, Signer::Key(id.clone()));
    assert_eq!(second.cache, Some(CacheOutcome::Hit));

    // A new runtime over the same cache directory also hits it.
    let runtime = Runtime::new(
        Some(agent_tests::component_cache(
            env.cache.path().join("components"),
        )),
        Limits::default(),
    )
    .expect("runtime");
    let third = runtime
        .load(
            env.package("signed-ok", &bytes, Origin::User),
            &env.trust(false),
        )
        .expect("third load");
    assert_eq!(third.cache, Some(CacheOutcome::Hit));

    // A tampered copy of a cached component is still refused: the cache is
    // consulted only after the signature verified.
    let mut tampered = bytes.clone();
    let middle = tampered.len() / 2;
    tampered[middle] ^= 0x80;
    let (_, source) = refused(env.load(env.package("signed-ok", &tampered, Origin::User), false));
    assert!(matches!(source, TrustError::BadSignature { .. }));

    // And what loaded runs.
    let ctx = env.context();
    let (out, _logs) = env
        .runtime
        .call_tool(
            &second,
            &ctx,
            "echo",
            &json!({"text": "signed"}).to_string(),
        )
        .await
        .expect("no host error");
    assert_eq!(out.expect("no tool error").text, "signed");
}

/// The built-in core-tools as the binary loads it.
fn builtin_package(origin: Origin) -> SkillPackage {
    let builtin = agent_builtins::all()
        .iter()
        .find(|b| b.name == "core-tools")
        .expect("core-tools is built in");
    SkillPackage::in_memory(
        "<builtin>/core-tools/SKILL.yaml",
        builtin.manifest,
        builtin
            .named_files()
            .map(|(p, b)| (p.to_string(), Arc::from(b)))
            .collect(),
        Some(agent_runtime::ComponentBytes::Deflated(builtin.component)),
        origin,
    )
    .expect("the built-in manifest parses")
}

#[test]
fn builtins_verify_with_the_builtin_key_and_only_as_builtins() {
    let env = SigEnv::new();
    let public = agent_builtins::public_key().expect("the embedded built-in key parses");
    let id = public.id();
    let trust = TrustPolicy {
        store: TrustStore::load(&env.sandbox.paths().trusted_keys_dir()).expect("store"),
        builtin_key: Some(public),
        allow_unsigned: false,
    };
    let skill = env
        .runtime
        .load(builtin_package(Origin::Builtin), &trust)
        .expect("core-tools loads as a built-in");
    assert_eq!(skill.name(), "core-tools");
    assert_eq!(skill.signer, Signer::Builtin(id.to_string()));
    assert!(skill.exports(agent_runtime::ExportKind::Tool));

    // Without the built-in key nothing vouches for it.
    let no_key = TrustPolicy {
        builtin_key: None,
        ..trust.clone()
    };
    let (message, source) = refused(env.runtime.load(builtin_package(Origin::Builtin), &no_key));
    assert!(matches!(&source, TrustError::UntrustedKey { key_id } if *key_id == id));
    assert!(message.contains("agent keys trust"), "{message}");

    // The same bytes from anywhere else: the built-in key is not trusted.
    for origin in [Origin::User, Origin::Project, Origin::Path] {
        for allow_unsigned in [false, true] {
            let trust = TrustPolicy {
                allow_unsigned,
                ..trust.clone()
            };
            let (message, source) = refused(env.runtime.load(builtin_package(origin), &trust));
            assert!(
                matches!(&source, TrustError::UntrustedKey { key_id } if *key_id == id),
                "{origin:?}: {source:?}"
            );
            assert!(message.contains(&id.to_string()), "{message}");
            assert!(message.contains("agent keys trust"), "{message}");
        }
    }
}
