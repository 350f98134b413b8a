//! End-to-end tests: real files, real signatures, real git.

use std::path::{Path, PathBuf};

use agent_registry::*;
use agent_trust::{SecretKey, TrustStore};
use semver::{Version, VersionReq};

const COMPONENT: &[u8] = b"\0asm\x0d\x00\x01\x00";

struct Env {
    tmp: tempfile::TempDir,
    key: SecretKey,
    trust: TrustStore,
}

impl Env {
    fn new() -> Env {
        let tmp = tempfile::tempdir().expect("tmp");
        let key = SecretKey::generate().expect("key");
        let mut trust = TrustStore::load(&tmp.path().join("trusted")).expect("trust");
        trust.trust(key.public(), "publisher").expect("trust");
        let env = Env { tmp, key, trust };
        init(&env.index()).expect("init");
        env
    }
    fn p(&self, rel: &str) -> PathBuf {
        self.tmp.path().join(rel)
    }
    fn index(&self) -> PathBuf {
        self.p("index")
    }
    fn dest(&self) -> PathBuf {
        self.p("skills")
    }
    fn skill_dir(&self, name: &str, version: &str, perms: &str) -> PathBuf {
        let dir = self.p(&format!("src-{name}-{version}"));
        std::fs::create_dir_all(dir.join("schemas")).expect("mkdir");
        std::fs::write(
            dir.join("SKILL.yaml"),
            format!(
                "name: {name}\nversion: {version}\ndescription: \"Demo {name} skill\"\nauthor: tester\ntypes: [tool]\n{perms}\nimplementation:\n  component: c.wasm\ntriggers:\n  keywords: [demo, widgets]\ntools:\n  - name: go\n    description: go\n    input_schema_file: schemas/go.json\n"
            ),
        )
        .expect("manifest");
        std::fs::write(dir.join("schemas/go.json"), "{\"type\":\"object\"}").expect("schema");
        std::fs::write(dir.join("c.wasm"), COMPONENT).expect("component");
        dir
    }
    fn publish(&self, name: &str, version: &str) -> VersionRecord {
        self.publish_with(
            name,
            version,
            "permissions: [shell:exec]\nexec: [git]",
            &self.key,
        )
    }
    fn publish_with(
        &self,
        name: &str,
        version: &str,
        perms: &str,
        key: &SecretKey,
    ) -> VersionRecord {
        let dir = self.skill_dir(name, version, perms);
        publish(&PublishRequest {
            component: &dir.join("c.wasm"),
            manifest: &dir.join("SKILL.yaml"),
            key,
            index: &self.index(),
            expires_in: time::Duration::days(365),
        })
        .expect("publish")
    }
    fn open(&self, seen: &Seen) -> Result<Index, RegistryError> {
        Index::open(
            &IndexSource::Path(self.index()),
            &self.p("cache"),
            &self.trust,
            seen,
            time::OffsetDateTime::now_utc(),
            &NoProgress,
        )
    }
    fn install(&self, name: &str) -> Result<Installed, RegistryError> {
        let idx = self.open(&Seen::default())?;
        let rec = idx.resolve(name, None, &Seen::default())?;
        idx.install(
            &rec,
            &self.dest(),
            &self.trust,
            &Version::new(0, 1, 0),
            &NoProgress,
        )
    }
    fn resign(&self) {
        // Re-sign the snapshot over whatever the files are now (a publisher-side edit).
        publish_noop(self);
    }
}

fn publish_noop(env: &Env) {
    // publish a throwaway skill to force a re-signed snapshot
    let n = std::fs::read_dir(env.index().join("skills"))
        .map(|d| d.count())
        .unwrap_or(0);
    env.publish(&format!("filler{n}"), "1.0.0");
}

/// `COMPONENT` signed by `key` over the skill in `dir`: SKILL.yaml and every file it names.
fn signed_for(dir: &Path, key: &SecretKey) -> Vec<u8> {
    let manifest = agent_manifest::Manifest::load_dir(dir).expect("manifest");
    let files: Vec<(String, Vec<u8>)> = manifest
        .signed_files()
        .into_iter()
        .map(|rel| {
            let bytes = agent_trust::read_skill_file(dir, &rel).expect("signed file");
            (rel, bytes)
        })
        .collect();
    agent_trust::sign(COMPONENT, &files, key.signing_key()).expect("sign")
}

/// Nothing but installed skill directories in `dest` (no staging leftovers).
fn dest_entries(dest: &Path) -> Vec<String> {
    let mut v: Vec<String> = std::fs::read_dir(dest)
        .map(|d| {
            d.map(|e| e.expect("entry").file_name().to_string_lossy().to_string())
                .collect()
        })
        .unwrap_or_default();
    v.sort();
    v
}

fn assert_refused(env: &Env, result: Result<Installed, RegistryError>, needle: &str) {
    let err = result.expect_err("must be refused");
    assert!(
        err.to_string().contains(needle),
        "expected `{needle}` in: {err}"
    );
    assert!(
        dest_entries(&env.dest()).is_empty(),
        "left behind: {:?}",
        dest_entries(&env.dest())
    );
}

#[test]
fn publish_search_resolve_install_update_remove() {
    let env = Env::new();
    let rec = env.publish("widget", "1.0.0");
    assert_eq!(
        rec.permissions,
        vec![PermissionRef {
            permission: "shell:exec".into(),
            scope: Some("git".into())
        }]
    );
    assert!(
        env.index()
            .join(format!("keys/{}.pub", env.key.public().id()))
            .is_file()
    );
    let idx = env.open(&Seen::default()).expect("open");
    assert_eq!(idx.snapshot_version(), 1);
    assert_eq!(idx.search("WIDG")[0].name, "widget");
    assert_eq!(idx.search("demo").len(), 1);
    assert!(idx.search("nothing-like-it").is_empty());
    let installed = env.install("widget").expect("install");
    assert_eq!(installed.version, Version::new(1, 0, 0));
    assert!(installed.dir.join("SKILL.yaml").is_file());
    assert!(installed.dir.join("schemas/go.json").is_file());
    assert_eq!(
        installed.digest,
        hex::encode(agent_trust::sha256(COMPONENT))
    );
    assert_eq!(dest_entries(&env.dest()), vec!["widget"]);

    env.publish("widget", "1.1.0");
    let idx = env
        .open(&Seen {
            snapshot: Some(1),
            ..Seen::default()
        })
        .expect("open");
    assert_eq!(idx.snapshot_version(), 2);
    let req = VersionReq::parse("~1.0").expect("req");
    assert_eq!(
        idx.resolve("widget", Some(&req), &Seen::default())
            .expect("resolve")
            .version,
        Version::new(1, 0, 0)
    );
    let up = env.install("widget").expect("update");
    assert_eq!(up.version, Version::new(1, 1, 0));
    assert_eq!(dest_entries(&env.dest()), vec!["widget"]);
    assert!(matches!(
        idx.resolve("nope", None, &Seen::default()),
        Err(RegistryError::UnknownSkill { .. })
    ));
    remove(&env.dest(), "widget").expect("remove");
    assert!(matches!(
        remove(&env.dest(), "widget"),
        Err(RegistryError::NotInstalled { .. })
    ));
    let report = verify_index(
        &env.index(),
        Some(&env.trust),
        time::OffsetDateTime::now_utc(),
    )
    .expect("verify");
    assert!(report.is_ok(), "{:?}", report.problems);
    assert_eq!(report.versions, 2);
}

#[test]
fn publishing_a_version_twice_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let dir = env.skill_dir("widget", "1.0.0", "permissions: []");
    let err = publish(&PublishRequest {
        component: &dir.join("c.wasm"),
        manifest: &dir.join("SKILL.yaml"),
        key: &env.key,
        index: &env.index(),
        expires_in: time::Duration::days(1),
    })
    .unwrap_err();
    assert!(err.to_string().contains("already published"), "{err}");
}

#[test]
fn tampered_artifact_byte_is_refused_and_old_install_kept() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    env.install("widget").expect("install");
    env.publish("widget", "2.0.0");
    let art = env.index().join("artifacts/widget-2.0.0.tar.gz");
    let mut bytes = std::fs::read(&art).expect("read");
    let last = bytes.len() - 5;
    bytes[last] ^= 0xff;
    std::fs::write(&art, bytes).expect("write");
    let err = env.install("widget").unwrap_err();
    assert!(
        err.to_string()
            .contains("artifacts/widget-2.0.0.tar.gz: sha256"),
        "{err}"
    );
    assert_eq!(dest_entries(&env.dest()), vec!["widget"]);
    let m = agent_manifest::Manifest::load_dir(&env.dest().join("widget")).expect("old");
    assert_eq!(m.version, Version::new(1, 0, 0));
    let report = verify_index(&env.index(), None, time::OffsetDateTime::now_utc()).expect("verify");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("widget-2.0.0.tar.gz")),
        "{:?}",
        report.problems
    );
}

#[test]
fn tampered_versions_file_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let v = env.index().join("skills/widget/versions/1.0.0.yaml");
    let text = std::fs::read_to_string(&v)
        .expect("read")
        .replace("scope: git", "scope: curl");
    std::fs::write(&v, text).expect("write");
    assert_refused(
        &env,
        env.install("widget"),
        "skills/widget/versions/1.0.0.yaml: sha256",
    );
    let report = verify_index(&env.index(), None, time::OffsetDateTime::now_utc()).expect("verify");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("versions/1.0.0.yaml: sha256")),
        "{:?}",
        report.problems
    );
}

#[test]
fn artifact_signed_by_an_untrusted_key_is_refused() {
    let env = Env::new();
    let stranger = SecretKey::generate().expect("key");
    env.publish_with("widget", "1.0.0", "permissions: []", &stranger);
    // The snapshot is now signed by the stranger too; trust the snapshot key but not the component key
    // by re-signing the snapshot with the trusted key.
    env.resign();
    assert_refused(&env, env.install("widget"), "do not trust");
}

#[test]
fn broken_snapshot_signature_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let snap = env.index().join("snapshot.yaml");
    let text = std::fs::read_to_string(&snap)
        .expect("read")
        .replace("version: 1", "version: 7");
    std::fs::write(&snap, text).expect("write");
    assert_refused(&env, env.install("widget"), "does not match snapshot.yaml");
    let report = verify_index(&env.index(), None, time::OffsetDateTime::now_utc()).expect("verify");
    assert!(
        report.problems.iter().any(|p| p.contains("snapshot.sig")),
        "{:?}",
        report.problems
    );
}

#[test]
fn untrusted_snapshot_key_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let empty = TrustStore::load(&env.p("no-trust")).expect("trust");
    let err = Index::open(
        &IndexSource::Path(env.index()),
        &env.p("cache"),
        &empty,
        &Seen::default(),
        time::OffsetDateTime::now_utc(),
        &NoProgress,
    )
    .unwrap_err();
    assert!(err.to_string().contains("agent keys trust keys/"), "{err}");
}

#[test]
fn expired_snapshot_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let later = time::OffsetDateTime::now_utc() + time::Duration::days(400);
    let err = Index::open(
        &IndexSource::Path(env.index()),
        &env.p("cache"),
        &env.trust,
        &Seen::default(),
        later,
        &NoProgress,
    )
    .unwrap_err();
    assert!(err.to_string().contains("expired"), "{err}");
    let report = verify_index(&env.index(), None, later).expect("verify");
    assert!(
        report.problems.iter().any(|p| p.contains("expired")),
        "{:?}",
        report.problems
    );
}

#[test]
fn rollback_to_an_older_snapshot_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let err = env
        .open(&Seen {
            snapshot: Some(5),
            ..Seen::default()
        })
        .unwrap_err();
    assert!(err.to_string().contains("rollback"), "{err}");
    assert!(
        env.open(&Seen {
            snapshot: Some(1),
            ..Seen::default()
        })
        .is_ok()
    );
}

#[test]
fn older_skill_version_offered_as_latest_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    env.publish("widget", "2.0.0");
    let mut seen = Seen::default();
    seen.saw_skill("widget", &Version::new(2, 0, 0));
    // An attacker with the snapshot key re-points latest at 1.0.0 and drops 2.0.0.
    let idx_path = env.index().join("index.yaml");
    let text = std::fs::read_to_string(&idx_path)
        .expect("read")
        .replace("latest: 2.0.0", "latest: 1.0.0");
    std::fs::write(&idx_path, text).expect("write");
    env.resign();
    let idx = env.open(&Seen::default()).expect("open");
    let err = idx.resolve("widget", None, &seen).unwrap_err();
    assert!(
        err.to_string().contains("rollback") && err.to_string().contains("2.0.0"),
        "{err}"
    );
    let req = VersionReq::parse("=1.0.0").expect("req");
    assert!(matches!(
        idx.resolve("widget", Some(&req), &seen),
        Err(RegistryError::SkillRollback { .. })
    ));
    let report = verify_index(&env.index(), None, time::OffsetDateTime::now_utc()).expect("verify");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("not the highest")),
        "{:?}",
        report.problems
    );
}

#[test]
fn dotdot_artifact_location_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let v = env.index().join("skills/widget/versions/1.0.0.yaml");
    let text = std::fs::read_to_string(&v)
        .expect("read")
        .replace("path: artifacts/", "path: ../../");
    std::fs::write(&v, text).expect("write");
    env.resign();
    assert_refused(
        &env,
        env.install("widget"),
        "artifact location `../../widget-1.0.0.tar.gz` leaves the index",
    );
}

#[test]
fn skill_yaml_name_differing_from_the_index_is_refused() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    env.publish("gadget", "1.0.0");
    // Point widget's versions file at gadget's artifact (correct digest, wrong skill).
    let g = std::fs::read_to_string(env.index().join("skills/gadget/versions/1.0.0.yaml"))
        .expect("read");
    let w = g.replace("name: gadget", "name: widget");
    std::fs::write(env.index().join("skills/widget/versions/1.0.0.yaml"), w).expect("write");
    env.resign();
    assert_refused(
        &env,
        env.install("widget"),
        "SKILL.yaml field `name` is `gadget`",
    );
}

fn tar_gz(entries: &[(&str, tar::EntryType, &[u8])]) -> Vec<u8> {
    let mut b = tar::Builder::new(flate2::write::GzEncoder::new(
        Vec::new(),
        flate2::Compression::default(),
    ));
    for (name, kind, data) in entries {
        let mut h = tar::Header::new_gnu();
        h.set_entry_type(*kind);
        h.set_size(data.len() as u64);
        h.set_mode(0o644);
        {
            let raw = h.as_old_mut();
            raw.name[..name.len()].copy_from_slice(name.as_bytes());
            if *kind == tar::EntryType::Symlink {
                raw.linkname[..11].copy_from_slice(b"/etc/passwd");
            }
        }
        h.set_cksum();
        b.append(&h, *data).expect("append");
    }
    b.into_inner().expect("tar").finish().expect("gz")
}

#[test]
fn unsafe_tar_entries_are_refused() {
    for (entry, kind, needle) in [
        ("../evil", tar::EntryType::Regular, "`..`"),
        ("/abs/evil", tar::EntryType::Regular, "absolute"),
        ("link", tar::EntryType::Symlink, "Symlink"),
        ("hard", tar::EntryType::Link, "Link"),
        ("dev", tar::EntryType::Char, "Char"),
    ] {
        let env = Env::new();
        env.publish("widget", "1.0.0");
        let archive = tar_gz(&[(entry, kind, b"x")]);
        let art = env.index().join("artifacts/widget-1.0.0.tar.gz");
        std::fs::write(&art, &archive).expect("write");
        let v = env.index().join("skills/widget/versions/1.0.0.yaml");
        let mut rec: VersionRecord =
            serde_yaml::from_str(&std::fs::read_to_string(&v).expect("read")).expect("yaml");
        rec.artifact.sha256 = hex::encode(agent_trust::sha256(&archive));
        rec.artifact.size = archive.len() as u64;
        std::fs::write(&v, serde_yaml::to_string(&rec).expect("yaml")).expect("write");
        env.resign();
        assert_refused(&env, env.install("widget"), needle);
        assert!(!env.p("evil").exists() && !env.p("abs").exists());
    }
}

#[test]
fn install_from_dir_verifies_the_signature() {
    let env = Env::new();
    let dir = env.skill_dir("local", "0.1.0", "permissions: []");
    // Unsigned: refused (an installed skill loads only signed), nothing installed.
    let err = install_from_dir(&dir, &env.dest(), &env.trust).unwrap_err();
    assert!(
        matches!(&err, RegistryError::UnsignedInstall { name, .. } if name == "local"),
        "{err}"
    );
    assert!(err.to_string().contains("not signed"), "{err}");
    assert!(!env.dest().exists());
    let stranger = SecretKey::generate().expect("key");
    std::fs::write(dir.join("c.wasm"), signed_for(&dir, &stranger)).expect("write");
    let err = install_from_dir(&dir, &env.dest(), &env.trust).unwrap_err();
    assert!(err.to_string().contains("do not trust"), "{err}");
    assert!(dest_entries(&env.dest()).is_empty());
    std::fs::write(dir.join("c.wasm"), signed_for(&dir, &env.key)).expect("write");
    let ok = install_from_dir(&dir, &env.dest(), &env.trust).expect("signed by a trusted key");
    assert_eq!(ok.name, "local");
    assert_eq!(dest_entries(&env.dest()), vec!["local"]);
}

#[test]
fn concurrent_installs_and_removes_into_one_directory_all_succeed() {
    // Installs into one directory take its lock in turn: none fails on
    // another's staging or move-aside, and none leaves anything behind.
    let env = Env::new();
    let sources = [
        env.skill_dir("local", "0.1.0", "permissions: []"),
        env.skill_dir("local", "0.2.0", "permissions: []"),
    ];
    for dir in &sources {
        std::fs::write(dir.join("c.wasm"), signed_for(dir, &env.key)).expect("sign");
    }
    std::thread::scope(|scope| {
        for t in 0..6 {
            let (env, sources) = (&env, &sources);
            scope.spawn(move || {
                for i in 0..5 {
                    let src = &sources[(t + i) % 2];
                    install_from_dir(src, &env.dest(), &env.trust).expect("install");
                    if t == 0 && i == 2 {
                        // A remove in the middle: it may find the skill or not
                        // (another install may not have committed yet).
                        match remove(&env.dest(), "local") {
                            Ok(()) | Err(RegistryError::NotInstalled { .. }) => {}
                            Err(e) => panic!("remove: {e}"),
                        }
                    }
                }
            });
        }
    });
    assert_eq!(dest_entries(&env.dest()), vec!["local"]);
    let yaml = std::fs::read_to_string(env.dest().join("local/SKILL.yaml")).expect("manifest");
    assert!(yaml.contains("version: 0.1.0") || yaml.contains("version: 0.2.0"));
}

fn git(dir: &Path, args: &[&str]) {
    let st = std::process::Command::new("git")
        .args([
            "-c",
            "user.name=t",
            "-c",
            "user.email=t@e",
            "-c",
            "init.defaultBranch=main",
        ])
        .args(args)
        .current_dir(dir)
        .status()
        .expect("git");
    assert!(st.success(), "git {args:?}");
}

#[test]
fn git_index_and_git_skill_install() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    git(&env.index(), &["init", "--quiet"]);
    git(&env.index(), &["add", "-A"]);
    git(&env.index(), &["commit", "--quiet", "-m", "v1"]);
    let url = format!("file://{}", env.index().display());
    let source = IndexSource::parse(&format!("git+{url}")).expect("source");
    let idx = Index::open(
        &source,
        &env.p("cache"),
        &env.trust,
        &Seen::default(),
        time::OffsetDateTime::now_utc(),
        &NoProgress,
    )
    .expect("open git");
    let rec = idx
        .resolve("widget", None, &Seen::default())
        .expect("resolve");
    idx.install(
        &rec,
        &env.dest(),
        &env.trust,
        &Version::new(0, 1, 0),
        &NoProgress,
    )
    .expect("install");
    // An update of the clone picks up a new commit.
    env.publish("widget", "1.1.0");
    git(&env.index(), &["add", "-A"]);
    git(&env.index(), &["commit", "--quiet", "-m", "v2"]);
    let idx = Index::open(
        &source,
        &env.p("cache"),
        &env.trust,
        &Seen::default(),
        time::OffsetDateTime::now_utc(),
        &NoProgress,
    )
    .expect("reopen");
    assert_eq!(idx.snapshot_version(), 2);
    git(&env.index(), &["tag", "v2"]);

    // A skill repository: SKILL.yaml at the root, component signed.
    let repo = env.skill_dir("gitskill", "0.3.0", "permissions: []");
    std::fs::write(repo.join("c.wasm"), signed_for(&repo, &env.key)).expect("write");
    git(&repo, &["init", "--quiet"]);
    git(&repo, &["add", "-A"]);
    git(&repo, &["commit", "--quiet", "-m", "skill"]);
    git(&repo, &["tag", "v0.3.0"]);
    let url = format!("file://{}", repo.display());
    let inst = install_from_git(
        &url,
        Some("v0.3.0"),
        &env.p("cache"),
        &env.dest(),
        &env.trust,
        &NoProgress,
    )
    .expect("git install");
    assert_eq!(inst.version, Version::new(0, 3, 0));
    let err = install_from_git(
        &url,
        Some("no-such-rev"),
        &env.p("cache"),
        &env.dest(),
        &env.trust,
        &NoProgress,
    )
    .unwrap_err();
    assert!(err.to_string().contains("no-such-rev"), "{err}");
}

/// A tiny loopback HTTP/1.1 file server over `root` (one thread per connection).
fn serve_dir(root: PathBuf) -> u16 {
    use std::io::{BufRead, BufReader, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").expect("bind");
    let port = listener.local_addr().expect("addr").port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { continue };
            let root = root.clone();
            std::thread::spawn(move || {
                let mut reader = BufReader::new(stream.try_clone().expect("clone"));
                loop {
                    let mut line = String::new();
                    if reader.read_line(&mut line).unwrap_or(0) == 0 {
                        return;
                    }
                    let path = line
                        .split_whitespace()
                        .nth(1)
                        .unwrap_or("/")
                        .trim_start_matches('/')
                        .to_string();
                    loop {
                        let mut h = String::new();
                        if reader.read_line(&mut h).unwrap_or(0) == 0 || h == "\r\n" {
                            break;
                        }
                    }
                    let (status, body) = match std::fs::read(root.join(&path)) {
                        Ok(b) if !path.contains("..") => ("200 OK", b),
                        _ => ("404 Not Found", b"missing".to_vec()),
                    };
                    let head = format!(
                        "HTTP/1.1 {status}\r\nContent-Length: {}\r\n\r\n",
                        body.len()
                    );
                    if stream
                        .write_all(head.as_bytes())
                        .and_then(|()| stream.write_all(&body))
                        .is_err()
                    {
                        return;
                    }
                }
            });
        }
    });
    port
}

#[test]
fn https_index_over_loopback() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let port = serve_dir(env.index());
    let source = IndexSource::parse(&format!("http://127.0.0.1:{port}/")).expect("source");
    assert!(matches!(source, IndexSource::Https(_)));
    let mirror = fetch(&source, &env.p("cache"), &NoProgress).expect("fetch");
    assert!(mirror.join("snapshot.sig").is_file());
    let idx = Index::open(
        &source,
        &env.p("cache"),
        &env.trust,
        &Seen::default(),
        time::OffsetDateTime::now_utc(),
        &NoProgress,
    )
    .expect("open");
    let rec = idx
        .resolve("widget", None, &Seen::default())
        .expect("resolve");
    let inst = idx
        .install(
            &rec,
            &env.dest(),
            &env.trust,
            &Version::new(0, 1, 0),
            &NoProgress,
        )
        .expect("install");
    assert_eq!(inst.name, "widget");
    // A missing file is an HTTP error naming the URL.
    std::fs::remove_file(env.index().join("artifacts/widget-1.0.0.tar.gz")).expect("rm");
    remove(&env.dest(), "widget").expect("remove");
    let err = idx
        .install(
            &rec,
            &env.dest(),
            &env.trust,
            &Version::new(0, 1, 0),
            &NoProgress,
        )
        .unwrap_err();
    assert!(err.to_string().contains("404"), "{err}");
    assert!(dest_entries(&env.dest()).is_empty());
}

#[test]
fn git_daemon_index() {
    let has_daemon = std::process::Command::new("git")
        .args(["daemon", "--help"])
        .output()
        .map(|o| o.status.success() || !o.stdout.is_empty())
        .unwrap_or(false);
    if !has_daemon {
        eprintln!("git daemon unavailable; skipped");
        return;
    }
    let env = Env::new();
    env.publish("widget", "1.0.0");
    git(&env.index(), &["init", "--quiet"]);
    git(&env.index(), &["add", "-A"]);
    git(&env.index(), &["commit", "--quiet", "-m", "v1"]);
    let port = std::net::TcpListener::bind("127.0.0.1:0")
        .expect("bind")
        .local_addr()
        .expect("addr")
        .port();
    // Run `git-daemon` itself (not the `git daemon` wrapper) so that killing
    // the child really stops the server.
    let exec_path = std::process::Command::new("git")
        .arg("--exec-path")
        .output()
        .expect("git");
    let exec_path = PathBuf::from(String::from_utf8_lossy(&exec_path.stdout).trim());
    let mut daemon = std::process::Command::new(exec_path.join("git-daemon"))
        .args([
            "--export-all",
            "--reuseaddr",
            "--listen=127.0.0.1",
            &format!("--port={port}"),
        ])
        .arg(format!("--base-path={}", env.tmp.path().display()))
        .arg(env.tmp.path())
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::null())
        .spawn()
        .expect("daemon");
    // Wait until it accepts connections.
    for _ in 0..100 {
        if std::net::TcpStream::connect(("127.0.0.1", port)).is_ok() {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
    let source = IndexSource::parse(&format!("git://127.0.0.1:{port}/index")).expect("source");
    let result = Index::open(
        &source,
        &env.p("cache"),
        &env.trust,
        &Seen::default(),
        time::OffsetDateTime::now_utc(),
        &NoProgress,
    )
    .and_then(|idx| {
        let rec = idx.resolve("widget", None, &Seen::default())?;
        idx.install(
            &rec,
            &env.dest(),
            &env.trust,
            &Version::new(0, 1, 0),
            &NoProgress,
        )
    });
    let _ = daemon.kill();
    let _ = daemon.wait();
    assert_eq!(result.expect("install over git daemon").name, "widget");
}

#[test]
fn verify_index_finds_unsigned_versions_files_and_a_changed_index() {
    let env = Env::new();
    env.publish("widget", "1.0.0");
    let now = time::OffsetDateTime::now_utc();
    assert!(
        verify_index(&env.index(), Some(&env.trust), now)
            .expect("verify")
            .is_ok()
    );
    std::fs::copy(
        env.index().join("skills/widget/versions/1.0.0.yaml"),
        env.index().join("skills/widget/versions/9.9.9.yaml"),
    )
    .expect("copy");
    let idx = env.index().join("index.yaml");
    let text = std::fs::read_to_string(&idx)
        .expect("read")
        .replace("Demo widget", "Evil widget");
    std::fs::write(&idx, text).expect("write");
    let report = verify_index(&env.index(), None, now).expect("verify");
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.contains("9.9.9.yaml: not listed in snapshot.yaml")),
        "{:?}",
        report.problems
    );
    assert!(
        report
            .problems
            .iter()
            .any(|p| p.starts_with("index.yaml: sha256")),
        "{:?}",
        report.problems
    );
    let stranger = TrustStore::load(&env.p("none")).expect("trust");
    let report = verify_index(&env.index(), Some(&stranger), now).expect("verify");
    assert!(
        report.problems.iter().any(|p| p.contains("do not trust")),
        "{:?}",
        report.problems
    );
}

#[test]
fn incompatible_agent_version_is_refused() {
    let env = Env::new();
    env.publish_with(
        "widget",
        "1.0.0",
        "permissions: []\ncompatibility:\n  agent_version: \">=9.0.0\"",
        &env.key,
    );
    let idx = env.open(&Seen::default()).expect("open");
    let rec = idx
        .resolve("widget", None, &Seen::default())
        .expect("resolve");
    assert!(rec.min_agent_version.is_some());
    let err = idx
        .install(
            &rec,
            &env.dest(),
            &env.trust,
            &Version::new(0, 1, 0),
            &NoProgress,
        )
        .unwrap_err();
    assert!(err.to_string().contains("requires agent >=9.0.0"), "{err}");
    assert!(!env.dest().exists());
}

/// A key rotation: `resign_index` re-signs every published version and the snapshot with a
/// new key without changing any component's unsigned bytes; clients trusting only the new
/// key install from it. A tampered index is refused before anything is re-signed.
#[test]
fn resign_index_rotates_the_key_and_refuses_a_tampered_index() {
    let env = Env::new();
    let old = env.publish("widget", "1.0.0");
    let new_key = SecretKey::generate().expect("key");
    let report = resign_index(&env.index(), &new_key, time::Duration::days(30)).expect("resign");
    assert_eq!(report.versions.len(), 1);
    assert_eq!(report.versions[0].old_key_id, env.key.public().id().0);
    let rel = "skills/widget/versions/1.0.0.yaml";
    let rec: VersionRecord =
        serde_yaml::from_slice(&std::fs::read(env.index().join(rel)).expect("read"))
            .expect("versions file");
    assert_eq!(rec.component.sha256, old.component.sha256, "same component");
    assert_eq!(rec.component.key_id, new_key.public().id().0);
    assert_ne!(rec.artifact.sha256, old.artifact.sha256);
    assert!(
        env.index()
            .join(format!("keys/{}.pub", new_key.public().id()))
            .is_file()
    );

    // A client that trusts only the new key verifies and installs.
    let mut trust = TrustStore::load(&env.p("trusted-new")).expect("trust");
    trust.trust(new_key.public(), "rotated").expect("trust");
    let report =
        verify_index(&env.index(), Some(&trust), time::OffsetDateTime::now_utc()).expect("verify");
    assert!(report.is_ok(), "{:?}", report.problems);
    let idx = Index::open(
        &IndexSource::Path(env.index()),
        &env.p("cache-new"),
        &trust,
        &Seen::default(),
        time::OffsetDateTime::now_utc(),
        &NoProgress,
    )
    .expect("open");
    let rec = idx
        .resolve("widget", None, &Seen::default())
        .expect("resolve");
    let installed = idx
        .install(
            &rec,
            &env.dest(),
            &trust,
            &Version::new(0, 1, 0),
            &NoProgress,
        )
        .expect("install after rotation");
    assert_eq!(installed.digest, old.component.sha256);

    // A changed artifact is not laundered under the key: nothing is rewritten.
    let art = env.index().join(&rec.artifact.path);
    let mut bytes = std::fs::read(&art).expect("read");
    let last = bytes.len() - 5;
    bytes[last] ^= 0xff;
    std::fs::write(&art, &bytes).expect("write");
    let snapshot = std::fs::read(env.index().join("snapshot.yaml")).expect("snapshot");
    let err = resign_index(&env.index(), &new_key, time::Duration::days(30)).unwrap_err();
    assert!(err.to_string().contains("widget-1.0.0.tar.gz"), "{err}");
    assert_eq!(
        std::fs::read(env.index().join("snapshot.yaml")).expect("snapshot"),
        snapshot
    );
}
