//! Built-ins precompiled when the binary was built, and the memo of verified
//! cached artifacts (issue 15, "Activation").
//!
//! The precompiled code is used when the engine accepts it and written to
//! the sealed cache; code the engine refuses (another processor, another
//! configuration) is compiled from the component instead. The memo lets an
//! unchanged artifact be mapped without re-reading it, and never lets an
//! artifact rewritten since its check be used.

use std::time::Duration;

use agent_runtime::{
    CacheConfig, CacheOutcome, Limits, Origin, Prebuilt, Rejection, Runtime, Skill, SkillPackage,
    TrustPolicy,
};
use agent_trust::TrustStore;
use serde_json::json;

use crate::common::Harness;

fn builtin_trust(h: &Harness) -> TrustPolicy {
    TrustPolicy {
        store: TrustStore::load(&h.sandbox.paths().trusted_keys_dir()).expect("trust store"),
        builtin_key: Some(agent_builtins::public_key().expect("built-in key")),
        allow_unsigned: false,
    }
}

/// core-tools as the binary finds it: with what the build checked and
/// compiled, or with `precompiled` in place of the build's code.
fn core_tools(precompiled: Option<Option<&'static [u8]>>) -> SkillPackage {
    let b = agent_builtins::all()
        .iter()
        .find(|b| b.name == "core-tools")
        .expect("core-tools is built in");
    agent_tests::builtin_package("core-tools", Origin::Builtin).with_prebuilt(Prebuilt {
        digest: b.digest,
        precompiled: precompiled.unwrap_or(b.precompiled),
    })
}

fn harness_with_own_cache() -> (Harness, CacheConfig) {
    let mut h = Harness::new(&["file:read"]);
    let cache = agent_tests::component_cache(h.sandbox.home.path().join("components"));
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    std::fs::write(h.project().join("hello.txt"), "hello from the project\n").expect("write");
    (h, cache)
}

async fn reads(h: &Harness, skill: &Skill) {
    let out = h
        .call_ok(skill, "read_file", json!({"path": "hello.txt"}))
        .await;
    assert!(out.contains("hello from the project"), "{out}");
}

/// The build precompiled core-tools (this test binary is built for the
/// machine it runs on): the first load takes that code, not the compiler,
/// and leaves it sealed in the cache; the next load is a cache hit.
#[tokio::test]
async fn a_built_in_loads_from_its_precompiled_code_and_caches_it() {
    let (h, cache) = harness_with_own_cache();
    let trust = builtin_trust(&h);
    assert!(
        core_tools(None)
            .prebuilt()
            .and_then(|p| p.precompiled)
            .is_some(),
        "the build precompiled core-tools"
    );
    let first = h.runtime.load(core_tools(None), &trust).expect("loads");
    assert_eq!(first.cache, Some(CacheOutcome::Precompiled));
    reads(&h, &first).await;
    let names: Vec<_> = std::fs::read_dir(&cache.dir)
        .expect("the cache holds the artifact")
        .map(|e| e.expect("entry").file_name())
        .collect();
    assert_eq!(names.len(), 1, "{names:?}");
    let second = h.runtime.load(core_tools(None), &trust).expect("loads");
    assert_eq!(second.cache, Some(CacheOutcome::Hit));
    reads(&h, &second).await;
}

/// Precompiled code the engine refuses (here: bytes that are not an
/// artifact at all, as a build for another processor would be to it) is not
/// an error: the component is compiled, and works.
#[tokio::test]
async fn precompiled_code_the_engine_refuses_falls_back_to_compiling() {
    let (h, _cache) = harness_with_own_cache();
    let trust = builtin_trust(&h);
    let refused: &'static [u8] = b"\x7fELF not an artifact of this engine";
    let skill = h
        .runtime
        .load(core_tools(Some(Some(refused))), &trust)
        .expect("loads by compiling");
    assert_eq!(skill.cache, Some(CacheOutcome::Compiled));
    reads(&h, &skill).await;

    // Without a cache at all, the same holds.
    let uncached = Runtime::new(None, Limits::default()).expect("runtime");
    let skill = uncached
        .load(core_tools(Some(Some(refused))), &trust)
        .expect("loads by compiling");
    assert_eq!(skill.cache, Some(CacheOutcome::Uncached));
}

/// The memo maps an artifact checked before without re-reading it, but an
/// artifact rewritten in place after that check (its change time moves) is
/// checked again: the altered code is rejected, recompiled and never run.
#[tokio::test]
async fn an_artifact_rewritten_in_place_after_a_memo_hit_is_rejected() {
    let (mut h, cache) = harness_with_own_cache();
    let trust = builtin_trust(&h);
    let first = h.runtime.load(core_tools(None), &trust).expect("loads");
    let artifact = h
        .runtime
        .cache()
        .artifact_path(first.digest.as_deref().expect("digest"))
        .expect("a cache is configured");
    let mapped_name = artifact
        .canonicalize()
        .expect("the artifact exists")
        .display()
        .to_string();
    // Files changed in the last two seconds are not memoized (timestamps
    // are coarse): let the artifact settle, then check it once (memoized)
    // and load it through the memo.
    std::thread::sleep(Duration::from_millis(2100));
    let checked = h.runtime.load(core_tools(None), &trust).expect("loads");
    assert_eq!(checked.cache, Some(CacheOutcome::Hit));
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    assert!(
        !maps.contains(&mapped_name),
        "a first check reads the artifact into memory"
    );
    let memo: Vec<_> = std::fs::read_dir(cache.key_file.parent().expect("dir"))
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .filter(|n| n.contains(".verified-"))
        .collect();
    assert_eq!(memo.len(), 1, "the memo sits next to the key: {memo:?}");
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    let mapped = h.runtime.load(core_tools(None), &trust).expect("loads");
    assert_eq!(mapped.cache, Some(CacheOutcome::Hit));
    // Mapped from the file (a full check deserialises a copy in memory,
    // which leaves no mapping of the file).
    let maps = std::fs::read_to_string("/proc/self/maps").expect("/proc/self/maps");
    assert!(
        maps.contains(&mapped_name),
        "the memoized artifact is mapped, not read: {mapped_name}"
    );
    reads(&h, &mapped).await;
    drop(mapped);

    // Rewritten in place (same inode, same size): native code replaced by
    // breakpoints.
    let mut bytes = std::fs::read(&artifact).expect("artifact");
    let text = agent_tests::elf_section(&bytes, ".text").expect(".text");
    bytes[text].fill(0xcc);
    {
        use std::io::{Seek, Write};
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&artifact)
            .expect("open for writing");
        f.seek(std::io::SeekFrom::Start(0)).expect("seek");
        f.write_all(&bytes).expect("rewrite in place");
    }
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    let after = h.runtime.load(core_tools(None), &trust).expect("loads");
    assert_eq!(
        after.cache,
        Some(CacheOutcome::Recompiled(Rejection::BadSeal)),
        "the rewritten artifact must not be mapped"
    );
    reads(&h, &after).await;

    // A forged memo entry naming the tampered file's exact identity, not
    // sealed under the key, is ignored: the artifact is checked.
    std::fs::write(&artifact, &bytes).expect("tampering again");
    let meta = std::fs::metadata(&artifact).expect("stat");
    let ns = |s: i64, n: i64| (s as u64) * 1_000_000_000 + n as u64;
    use std::os::unix::fs::MetadataExt;
    let mut forged = format!(
        "{} {} {} {} {} {}\n",
        artifact.file_name().expect("name").to_string_lossy(),
        meta.dev(),
        meta.ino(),
        meta.size(),
        ns(meta.mtime(), meta.mtime_nsec()),
        ns(meta.ctime(), meta.ctime_nsec()),
    )
    .into_bytes();
    forged.extend_from_slice(&[0u8; 32]);
    std::fs::write(cache.key_file.with_file_name(&memo[0]), forged).expect("forging the memo");
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    let forged = h.runtime.load(core_tools(None), &trust).expect("loads");
    assert_eq!(
        forged.cache,
        Some(CacheOutcome::Recompiled(Rejection::BadSeal))
    );
    reads(&h, &forged).await;
}

/// The memo of component digests: an installed skill's component is not
/// hashed again while its file keeps its identity, and a component
/// rewritten in place after it was memoized (same size, one byte changed)
/// is hashed again and refused: its signature no longer matches.
#[tokio::test]
async fn a_component_rewritten_in_place_after_its_digest_was_memoized_is_refused() {
    let (mut h, cache) = harness_with_own_cache();
    let dir = h.sandbox.home.path().join("skill-src").join("memo-skill");
    agent_tests::write_skill(
        &dir,
        &agent_tests::tool_manifest("memo-skill", "permissions: [file:read, shell:exec]\n"),
        &crate::common::hostile(),
        Some(&h.key),
    );
    let load = |runtime: &Runtime| {
        let pkg = SkillPackage::from_dir(&dir, Origin::Path).expect("package");
        runtime.load(pkg, &h.trust)
    };
    load(&h.runtime).expect("loads");
    std::thread::sleep(Duration::from_millis(2100));
    load(&h.runtime).expect("loads (its digest memoized now)");
    let memo = cache
        .key_file
        .parent()
        .expect("dir")
        .read_dir()
        .expect("dir")
        .map(|e| e.expect("entry").file_name().to_string_lossy().into_owned())
        .find(|n| n.contains(".verified-components-"))
        .expect("a memo of component digests next to the key");
    println!("memo: {memo}");
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    load(&h.runtime).expect("loads through the memo");

    // One byte of the component changed in place, after its signature.
    let component = dir.join("skill.wasm");
    let mut bytes = std::fs::read(&component).expect("component");
    let at = bytes.len() / 2;
    bytes[at] ^= 0xff;
    {
        use std::io::Write;
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .open(&component)
            .expect("open for writing");
        f.write_all(&bytes).expect("rewrite in place");
    }
    h.runtime = Runtime::new(Some(cache.clone()), Limits::default()).expect("runtime");
    let err = load(&h.runtime).expect_err("the altered component is refused");
    let text = err.to_string();
    assert!(
        matches!(err, agent_runtime::LoadError::Signature { .. }),
        "refused by its signature, not later: {text}"
    );
    assert!(text.contains("memo-skill"), "{text}");
}
