//! The compiled-component cache against someone who can write it but not
//! the key that seals it: an altered artifact is never mapped. It is
//! discarded, recompiled and replaced, the load says so
//! (`CacheOutcome::Recompiled`, which the binary warns about and audits),
//! and the skill runs its real code.

use agent_runtime::{CacheOutcome, Limits, Origin, Rejection, Runtime, Skill, TrustPolicy};
use agent_trust::TrustStore;
use serde_json::json;

use crate::common::Harness;

/// The policy of the binary for built-ins.
fn builtin_trust(h: &Harness) -> TrustPolicy {
    TrustPolicy {
        store: TrustStore::load(&h.sandbox.paths().trusted_keys_dir()).expect("trust store"),
        builtin_key: Some(agent_builtins::public_key().expect("built-in key")),
        allow_unsigned: false,
    }
}

fn load_core_tools(runtime: &Runtime, trust: &TrustPolicy) -> Skill {
    runtime
        .load(
            agent_tests::builtin_package("core-tools", Origin::Builtin),
            trust,
        )
        .expect("core-tools loads")
}

/// A harness granting file:read whose runtime uses a cache of its own (in
/// the sandbox's home, key next to it), and a file to read.
fn harness_with_own_cache() -> (Harness, agent_runtime::CacheConfig) {
    let mut h = Harness::new(&["file:read"]);
    let cache = agent_tests::component_cache(h.sandbox.home.path().join("components"));
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    std::fs::write(h.project().join("hello.txt"), "hello from the project\n").expect("write");
    (h, cache)
}

#[tokio::test]
async fn an_altered_code_section_of_the_cached_core_tools_is_recompiled_never_run() {
    let (mut h, cache) = harness_with_own_cache();
    let trust = builtin_trust(&h);
    let first = load_core_tools(&h.runtime, &trust);
    assert_eq!(first.cache, Some(CacheOutcome::Compiled));
    let artifact = h
        .runtime
        .cache()
        .artifact_path(first.digest.as_deref().expect("digest"))
        .expect("a cache is configured");

    // The attacker overwrites the native code of the cached artifact with
    // breakpoints (int3): mapped and run, every call would trap.
    let mut bytes = std::fs::read(&artifact).expect("reading the artifact");
    let text = agent_tests::elf_section(&bytes, ".text").expect("the artifact's .text section");
    println!(
        "artifact {} B, .text at {}..{} overwritten",
        bytes.len(),
        text.start,
        text.end
    );
    bytes[text].fill(0xcc);
    std::fs::write(&artifact, &bytes).expect("tampering with the artifact");

    // The next start (a new runtime over the same cache) rejects it.
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    let second = load_core_tools(&h.runtime, &trust);
    assert_eq!(
        second.cache,
        Some(CacheOutcome::Recompiled(Rejection::BadSeal)),
        "the altered artifact must not be used"
    );
    // What loaded is the real core-tools: a call succeeds.
    let out = h
        .call_ok(&second, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert!(out.contains("hello from the project"), "{out}");
    // The artifact was replaced by a sealed one, which the next load uses.
    assert_ne!(std::fs::read(&artifact).expect("artifact"), bytes);
    let third = load_core_tools(&h.runtime, &trust);
    assert_eq!(third.cache, Some(CacheOutcome::Hit));
    let out = h
        .call_ok(&third, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert!(out.contains("hello from the project"), "{out}");
}

#[tokio::test]
async fn an_artifact_sealed_under_another_key_or_truncated_is_rejected() {
    let (mut h, cache) = harness_with_own_cache();
    let trust = builtin_trust(&h);
    let first = load_core_tools(&h.runtime, &trust);
    let artifact = h
        .runtime
        .cache()
        .artifact_path(first.digest.as_deref().expect("digest"))
        .expect("a cache is configured");
    let genuine = std::fs::read(&artifact).expect("artifact");

    // Another user's cache, or this cache after the key was replaced: the
    // artifact is intact but not sealed under this key.
    std::fs::write(&cache.key_file, [7u8; 32]).expect("replacing the key");
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    let other_key = load_core_tools(&h.runtime, &trust);
    assert_eq!(
        other_key.cache,
        Some(CacheOutcome::Recompiled(Rejection::BadSeal))
    );
    let resealed = std::fs::read(&artifact).expect("artifact");
    assert_ne!(resealed, genuine, "resealed under the new key");

    // A torn write (the file cut short): rejected, never parsed.
    std::fs::write(&artifact, &resealed[..resealed.len() / 2]).expect("truncating");
    let truncated = load_core_tools(&h.runtime, &trust);
    assert_eq!(
        truncated.cache,
        Some(CacheOutcome::Recompiled(Rejection::BadSeal))
    );
    assert_eq!(
        load_core_tools(&h.runtime, &trust).cache,
        Some(CacheOutcome::Hit)
    );
    let out = h
        .call_ok(&truncated, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert!(out.contains("hello from the project"), "{out}");

    // The key never lives in the cache directory, and nothing else is left there.
    assert!(!cache.key_file.starts_with(&cache.dir));
    let names: Vec<String> = std::fs::read_dir(&cache.dir)
        .expect("cache dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .collect();
    assert_eq!(
        names.len(),
        1,
        "one artifact and no temporary file: {names:?}"
    );
    assert!(names[0].ends_with(".sealed.cwasm"), "{names:?}");
}
