//! Where an index comes from, and fetching it: `git` (the program, with an
//! argument vector), a local directory, or HTTPS.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::RegistryError;

/// The largest single file read from an index or download (64 MiB).
pub const MAX_FILE_BYTES: u64 = 64 * 1024 * 1024;

/// Where an index lives.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum IndexSource {
    /// A git repository holding the index at its root.
    Git {
        /// The repository URL.
        url: String,
        /// A branch, tag or commit; none means the remote's HEAD.
        rev: Option<String>,
    },
    /// A local directory.
    Path(PathBuf),
    /// A base URL; files are fetched relative to it.
    Https(String),
}

impl IndexSource {
    /// Parses a git repository ([`GitSource::parse`]), `https://...` (or
    /// `http://` to a loopback host), `file://PATH`, or a local path.
    ///
    /// # Errors
    /// [`RegistryError::Source`] for an empty source, plain `http://` to a
    /// non-loopback host, or a URL or rev starting with `-`.
    pub fn parse(s: &str) -> Result<IndexSource, RegistryError> {
        let err = |message: &str| RegistryError::Source {
            source_text: s.to_string(),
            message: message.to_string(),
        };
        let s_trim = s.trim();
        if s_trim.is_empty() {
            return Err(err("empty; give git+URL[#rev], https://URL or a directory"));
        }
        if let Some(GitSource { url, rev }) = GitSource::parse(s_trim)? {
            return Ok(IndexSource::Git { url, rev });
        }
        if s_trim.starts_with("https://") {
            return Ok(IndexSource::Https(s_trim.trim_end_matches('/').to_string()));
        }
        if let Some(rest) = s_trim.strip_prefix("http://") {
            let host = rest.split(['/', ':']).next().unwrap_or_default();
            let host = if rest.starts_with("[::1]") {
                "[::1]"
            } else {
                host
            };
            if matches!(host, "127.0.0.1" | "localhost" | "[::1]") {
                return Ok(IndexSource::Https(s_trim.trim_end_matches('/').to_string()));
            }
            return Err(err(
                "plain http:// is refused except to a loopback host; use https://",
            ));
        }
        if let Some(path) = s_trim.strip_prefix("file://") {
            return Ok(IndexSource::Path(PathBuf::from(path)));
        }
        if s_trim.contains("://") {
            return Err(err(
                "unknown scheme; give git+URL[#rev], https://URL or a directory",
            ));
        }
        Ok(IndexSource::Path(PathBuf::from(s_trim)))
    }

    /// A stable key for state stored about this index (`git:<url>`,
    /// `https:<url>`, `path:<absolute path>`). The git rev is not part of it,
    /// so rollback protection spans branches.
    pub fn id(&self) -> String {
        match self {
            IndexSource::Git { url, .. } => format!("git:{url}"),
            IndexSource::Https(url) => format!("https:{url}"),
            IndexSource::Path(p) => {
                let abs = std::path::absolute(p).unwrap_or_else(|_| p.clone());
                format!("path:{}", abs.display())
            }
        }
    }
}

/// A git repository, and the branch, tag or commit to check out (none: the
/// remote's HEAD).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GitSource {
    /// The repository URL, as given to `git clone`.
    pub url: String,
    /// A branch, tag or commit.
    pub rev: Option<String>,
}

impl GitSource {
    /// Reads `s` as a git repository when it names one: `git+URL`, a URL
    /// starting with `git://` or ending in `.git`, or a repository on a forge
    /// with or without `https://` (`github.com/OWNER/REPO`, also gitlab.com,
    /// codeberg.org and bitbucket.org; cloned from `https://HOST/OWNER/REPO`),
    /// each optionally followed by `#rev`. `Ok(None)` when `s` names no git
    /// repository (a directory, an HTTPS base URL, a skill name). The one
    /// parser for index sources and `agent skill install` sources.
    ///
    /// # Errors
    /// [`RegistryError::Source`] for a URL or rev starting with `-`, empty,
    /// or using git's `ext::` transport.
    pub fn parse(s: &str) -> Result<Option<GitSource>, RegistryError> {
        let s = s.trim();
        let (base, rev) = match s.rsplit_once('#') {
            Some((b, r)) if !r.is_empty() => (b, Some(r.to_string())),
            _ => (s, None),
        };
        let url = if let Some(url) = base.strip_prefix("git+") {
            url.to_string()
        } else if base.starts_with("git://") || base.ends_with(".git") {
            base.to_string()
        } else if let Some(url) = forge_repo_url(base) {
            url
        } else {
            return Ok(None);
        };
        check_git_arg(&url, s)?;
        if let Some(r) = &rev {
            check_git_arg(r, s)?;
        }
        Ok(Some(GitSource { url, rev }))
    }
}

fn check_git_arg(arg: &str, source: &str) -> Result<(), RegistryError> {
    if arg.is_empty() || arg.starts_with('-') || arg.contains('\0') || arg.starts_with("ext::") {
        return Err(RegistryError::Source {
            source_text: source.to_string(),
            message: format!("`{arg}` is not an acceptable git URL or revision"),
        });
    }
    Ok(())
}

/// Reports progress of long operations (downloads, clones, extraction).
pub trait Progress {
    /// Something starts; `total` in bytes when known.
    fn start(&self, what: &str, total: Option<u64>);
    /// `n` more bytes (or steps) are done.
    fn advance(&self, n: u64);
    /// It is finished.
    fn finish(&self, what: &str);
}

/// Progress that reports nothing.
#[derive(Debug, Clone, Copy, Default)]
pub struct NoProgress;

impl Progress for NoProgress {
    fn start(&self, _what: &str, _total: Option<u64>) {}
    fn advance(&self, _n: u64) {}
    fn finish(&self, _what: &str) {}
}

/// Makes the index available locally and returns its root: a git clone in
/// `cache_dir` (updated when present), the directory itself, or for HTTPS a
/// mirror in `cache_dir` of the top-level files (`index.yaml`,
/// `snapshot.yaml`, `snapshot.sig` and the snapshot key); other files are
/// fetched on demand by [`crate::Index`].
///
/// # Errors
/// Git, HTTP or I/O failures, naming the URL or path.
pub fn fetch(
    source: &IndexSource,
    cache_dir: &Path,
    progress: &dyn Progress,
) -> Result<PathBuf, RegistryError> {
    match source {
        IndexSource::Path(p) => {
            if !p.join("index.yaml").is_file() {
                return Err(RegistryError::Invalid(format!(
                    "{}: no index.yaml here; is this a registry index (`agent registry init DIR`)?",
                    p.display()
                )));
            }
            Ok(p.clone())
        }
        IndexSource::Git { url, rev } => git_checkout(url, rev.as_deref(), cache_dir, progress),
        IndexSource::Https(base) => {
            let dir = cache_dir.join(format!("https-{}", short_hash(base)));
            std::fs::create_dir_all(dir.join("keys")).map_err(|e| RegistryError::io(&dir, e))?;
            let files = Files::Https(base.clone());
            for name in ["index.yaml", "snapshot.yaml", "snapshot.sig"] {
                let bytes = files.read(name, progress)?;
                write_atomic(&dir.join(name), &bytes)?;
            }
            let sig: crate::format::SnapshotSig = crate::format::parse_yaml(
                &std::fs::read(dir.join("snapshot.sig"))
                    .map_err(|e| RegistryError::io(dir.join("snapshot.sig"), e))?,
                "snapshot.sig",
            )?;
            crate::format::check_key_id(&sig.key_id, "snapshot.sig", "key_id")?;
            let key = format!("keys/{}.pub", sig.key_id);
            let bytes = files.read(&key, progress)?;
            write_atomic(&dir.join(&key), &bytes)?;
            Ok(dir)
        }
    }
}

pub(crate) fn short_hash(s: &str) -> String {
    hex::encode(&agent_trust::sha256(s.as_bytes())[..8])
}

/// Writes `bytes` to a temporary file next to `path` and renames it over
/// (mode 0644).
pub(crate) fn write_atomic(path: &Path, bytes: &[u8]) -> Result<(), RegistryError> {
    let parent = path.parent().unwrap_or(Path::new("."));
    std::fs::create_dir_all(parent).map_err(|e| RegistryError::io(parent, e))?;
    let mut tmp =
        tempfile::NamedTempFile::new_in(parent).map_err(|e| RegistryError::io(parent, e))?;
    std::io::Write::write_all(&mut tmp, bytes).map_err(|e| RegistryError::io(path, e))?;
    // Index files are public: readable by everyone, like files `git`
    // checks out (the temporary file starts private).
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        tmp.as_file()
            .set_permissions(std::fs::Permissions::from_mode(0o644))
            .map_err(|e| RegistryError::io(path, e))?;
    }
    tmp.persist(path)
        .map_err(|e| RegistryError::io(path, e.error))?;
    Ok(())
}

/// Read access to an index's files.
#[derive(Debug, Clone)]
pub(crate) enum Files {
    Dir(PathBuf),
    Https(String),
}

impl Files {
    /// Reads `rel` (already checked with `check_rel_path` or a fixed name).
    pub(crate) fn read(
        &self,
        rel: &str,
        progress: &dyn Progress,
    ) -> Result<Vec<u8>, RegistryError> {
        match self {
            Files::Dir(root) => {
                let path = root.join(rel);
                let meta = std::fs::symlink_metadata(&path).map_err(|e| {
                    if e.kind() == std::io::ErrorKind::NotFound {
                        RegistryError::format(
                            rel,
                            None,
                            "missing from the index; the index is incomplete, ask its publisher",
                        )
                    } else {
                        RegistryError::io(&path, e)
                    }
                })?;
                if !meta.is_file() {
                    return Err(RegistryError::format(
                        rel,
                        None,
                        "is not a regular file (symlinks are not followed)",
                    ));
                }
                if meta.len() > MAX_FILE_BYTES {
                    return Err(RegistryError::TooLarge {
                        file: rel.to_string(),
                        message: format!("larger than {MAX_FILE_BYTES} bytes"),
                    });
                }
                std::fs::read(&path).map_err(|e| RegistryError::io(&path, e))
            }
            Files::Https(base) => http_get(&format!("{base}/{rel}"), progress),
        }
    }
}

/// GET `url` on a private current-thread runtime in its own thread, so it
/// works whether or not the caller is inside a tokio runtime.
fn http_get(url: &str, progress: &dyn Progress) -> Result<Vec<u8>, RegistryError> {
    let err = |message: String| RegistryError::Http {
        url: url.to_string(),
        message,
    };
    progress.start(url, None);
    let owned = url.to_string();
    let result = std::thread::scope(|s| {
        s.spawn(move || -> Result<Vec<u8>, String> {
            let rt = tokio::runtime::Builder::new_current_thread()
                .enable_all()
                .build()
                .map_err(|e| e.to_string())?;
            rt.block_on(async move {
                let client = agent_tls::client_builder()
                    .timeout(std::time::Duration::from_secs(120))
                    .build()
                    .map_err(|e| e.to_string())?;
                let mut resp = client.get(&owned).send().await.map_err(|e| e.to_string())?;
                if !resp.status().is_success() {
                    return Err(format!("the server answered {}", resp.status()));
                }
                let mut out = Vec::new();
                while let Some(chunk) = resp.chunk().await.map_err(|e| e.to_string())? {
                    out.extend_from_slice(&chunk);
                    if out.len() as u64 > MAX_FILE_BYTES {
                        return Err(format!("larger than {MAX_FILE_BYTES} bytes"));
                    }
                }
                Ok(out)
            })
        })
        .join()
        .unwrap_or_else(|_| Err("the download thread failed".to_string()))
    });
    let bytes = result.map_err(err)?;
    progress.advance(bytes.len() as u64);
    progress.finish(url);
    Ok(bytes)
}

fn run_git(args: &[&str], action: &str, url: &str) -> Result<String, RegistryError> {
    let out = Command::new("git")
        .args([
            "-c",
            "protocol.ext.allow=never",
            "-c",
            "core.hooksPath=/dev/null",
        ])
        .args(args)
        .env("GIT_TERMINAL_PROMPT", "0")
        .stdin(std::process::Stdio::null())
        .output()
        .map_err(|e| RegistryError::Git {
            action: action.to_string(),
            url: url.to_string(),
            message: format!("cannot run `git` ({e}); is git installed and on PATH?"),
        })?;
    if !out.status.success() {
        return Err(RegistryError::Git {
            action: action.to_string(),
            url: url.to_string(),
            message: String::from_utf8_lossy(&out.stderr).trim().to_string(),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).trim().to_string())
}

/// Clones (or updates) `url` into `cache_dir/git-<hash>` and checks out `rev`
/// (or the remote HEAD), detached. Returns the work tree.
pub(crate) fn git_checkout(
    url: &str,
    rev: Option<&str>,
    cache_dir: &Path,
    progress: &dyn Progress,
) -> Result<PathBuf, RegistryError> {
    check_git_arg(url, url)?;
    if let Some(r) = rev {
        check_git_arg(r, r)?;
    }
    let dir = cache_dir.join(format!("git-{}", short_hash(url)));
    let dir_s = dir.to_string_lossy().to_string();
    progress.start(&format!("git {url}"), None);
    std::fs::create_dir_all(cache_dir).map_err(|e| RegistryError::io(cache_dir, e))?;
    let usable = dir.join(".git").is_dir()
        && run_git(
            &["-C", &dir_s, "remote", "get-url", "origin"],
            "remote",
            url,
        )
        .is_ok_and(|u| u == url);
    if !usable {
        if dir.exists() {
            std::fs::remove_dir_all(&dir).map_err(|e| RegistryError::io(&dir, e))?;
        }
        run_git(
            &["clone", "--quiet", "--no-checkout", "--", url, &dir_s],
            "clone",
            url,
        )?;
    }
    let target = match rev {
        None => {
            run_git(
                &[
                    "-C", &dir_s, "fetch", "--quiet", "--force", "origin", "HEAD",
                ],
                "fetch",
                url,
            )?;
            "FETCH_HEAD".to_string()
        }
        Some(r) => {
            run_git(
                &[
                    "-C",
                    &dir_s,
                    "fetch",
                    "--quiet",
                    "--force",
                    "--tags",
                    "origin",
                    "+refs/heads/*:refs/remotes/origin/*",
                ],
                "fetch",
                url,
            )?;
            let branch = format!("refs/remotes/origin/{r}^{{commit}}");
            let other = format!("{r}^{{commit}}");
            run_git(
                &["-C", &dir_s, "rev-parse", "--verify", "--quiet", &branch],
                "rev-parse",
                url,
            )
            .or_else(|_| {
                run_git(
                    &["-C", &dir_s, "rev-parse", "--verify", "--quiet", &other],
                    "rev-parse",
                    url,
                )
            })
            .map_err(|_| RegistryError::Git {
                action: "checkout".into(),
                url: url.to_string(),
                message: format!("no branch, tag or commit `{r}` in the repository"),
            })?
        }
    };
    run_git(
        &[
            "-C", &dir_s, "checkout", "--quiet", "--force", "--detach", &target,
        ],
        "checkout",
        url,
    )?;
    run_git(&["-C", &dir_s, "clean", "--quiet", "-fdx"], "clean", url)?;
    progress.finish(&format!("git {url}"));
    Ok(dir)
}

/// The forges whose repository pages are git repositories.
const FORGES: [&str; 4] = ["github.com", "gitlab.com", "codeberg.org", "bitbucket.org"];

/// `https://HOST/OWNER/REPO` when `s` names a repository on a git forge,
/// with or without `https://` (`github.com/OWNER/REPO`; also gitlab.com,
/// codeberg.org and bitbucket.org): such a source is cloned, as the spec's
/// default `registry_url` and its `agent skill install github.com/...`
/// expect, not read as files over HTTPS or as a local path.
fn forge_repo_url(s: &str) -> Option<String> {
    let rest = s.strip_prefix("https://").unwrap_or(s);
    let mut parts = rest.trim_end_matches('/').split('/');
    let host = parts.next().unwrap_or_default();
    let path: Vec<&str> = parts.collect();
    let name_ok = |p: &&str| {
        !p.is_empty()
            && !p.starts_with(['.', '-'])
            && p.chars()
                .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'))
    };
    (FORGES.contains(&host) && path.len() == 2 && path.iter().all(name_ok))
        .then(|| format!("https://{host}/{}/{}", path[0], path[1]))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sources_parse() {
        assert_eq!(
            IndexSource::parse("git+https://example.com/idx#v2").expect("git"),
            IndexSource::Git {
                url: "https://example.com/idx".into(),
                rev: Some("v2".into())
            }
        );
        assert_eq!(
            IndexSource::parse("https://example.com/skills.git").expect("git"),
            IndexSource::Git {
                url: "https://example.com/skills.git".into(),
                rev: None
            }
        );
        assert!(matches!(
            IndexSource::parse("git://127.0.0.1:9/x").expect("git"),
            IndexSource::Git { .. }
        ));
        assert_eq!(
            IndexSource::parse("https://example.com/idx/").expect("https"),
            IndexSource::Https("https://example.com/idx".into())
        );
        assert!(matches!(
            IndexSource::parse("http://127.0.0.1:8080/i").expect("http"),
            IndexSource::Https(_)
        ));
        assert_eq!(
            IndexSource::parse("https://github.com/aiagent-skills/registry").expect("forge"),
            IndexSource::Git {
                url: "https://github.com/aiagent-skills/registry".into(),
                rev: None
            }
        );
        assert!(matches!(
            IndexSource::parse("https://github.com/o/r/raw/main").expect("files"),
            IndexSource::Https(_)
        ));
        assert!(IndexSource::parse("http://example.com/i").is_err());
        assert_eq!(
            IndexSource::parse("codeberg.org/o/idx#v1").expect("forge shorthand"),
            IndexSource::Git {
                url: "https://codeberg.org/o/idx".into(),
                rev: Some("v1".into())
            }
        );
        assert!(IndexSource::parse("git+--upload-pack=x").is_err());
        assert!(IndexSource::parse("git+ext::sh -c x").is_err());
        assert!(IndexSource::parse("").is_err());
        assert_eq!(
            IndexSource::parse("./idx").expect("path"),
            IndexSource::Path("./idx".into())
        );
        assert!(
            IndexSource::parse("git+https://e/x")
                .expect("g")
                .id()
                .starts_with("git:https://e/x")
        );
    }

    /// `agent skill install github.com/OWNER/REPO`, the spec's own example,
    /// names a git repository; so do the other forges, with or without
    /// `https://`, with an optional `#rev`. Anything else is not git: a
    /// local path, a skill name, a forge URL that is not a repository page.
    #[test]
    fn forge_shorthands_are_git_sources() {
        let git = |s: &str| GitSource::parse(s).expect("parses");
        for (text, url, rev) in [
            (
                "github.com/OWNER/REPO",
                "https://github.com/OWNER/REPO",
                None,
            ),
            ("https://github.com/o/r", "https://github.com/o/r", None),
            ("github.com/o/r/", "https://github.com/o/r", None),
            (
                "gitlab.com/o/r#v1.2",
                "https://gitlab.com/o/r",
                Some("v1.2"),
            ),
            (
                "codeberg.org/o/my_skill",
                "https://codeberg.org/o/my_skill",
                None,
            ),
            (
                "bitbucket.org/o/r#main",
                "https://bitbucket.org/o/r",
                Some("main"),
            ),
            ("git+file:///tmp/x#v2", "file:///tmp/x", Some("v2")),
            ("git://127.0.0.1:9/x", "git://127.0.0.1:9/x", None),
        ] {
            assert_eq!(
                git(text),
                Some(GitSource {
                    url: url.into(),
                    rev: rev.map(String::from)
                }),
                "{text}"
            );
        }
        for text in [
            "rust-hello",
            "rust-hello@^0.2",
            "./github.com/o/r",
            "example.com/o/r",
            "github.com/o",
            "github.com/o/r/tree/main",
            "github.com/o/..",
            "https://github.com/o/r/raw/main",
        ] {
            assert_eq!(git(text), None, "{text}");
        }
        assert!(
            GitSource::parse("github.com/-o/r")
                .expect("not git")
                .is_none()
        );
        assert!(GitSource::parse("github.com/o/r#--upload-pack=x").is_err());
    }
}
