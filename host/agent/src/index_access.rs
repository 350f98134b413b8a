//! Opening a skill index for the commands that read one (`agent skill install|search|update`,
//! `agent registry verify`): picking the source, the trusted keys, what was seen from it before
//! (the store's `registry_seen` table, so that a rollback to an older snapshot or version is
//! refused), and progress bars.

use std::io::IsTerminal;
use std::sync::Mutex;
use std::time::Duration;

use agent_registry::{Index, IndexSource, NoProgress, Progress, Seen};
use agent_store::{RegistrySeen, Store};
use agent_trust::TrustStore;
use anyhow::Result;

use crate::app::App;
use crate::cli::{IndexArg, UsageError};

/// The version of this agent, checked against a skill's `min_agent_version`.
pub(crate) fn agent_version() -> semver::Version {
    semver::Version::parse(env!("CARGO_PKG_VERSION")).unwrap_or(semver::Version::new(0, 0, 0))
}

// ---------------------------------------------------------------------------
// Progress on a terminal.

/// An indicatif bar on stderr, or nothing when stderr is not a terminal.
struct Bars {
    bar: Mutex<Option<indicatif::ProgressBar>>,
}

impl Bars {
    fn new() -> Bars {
        Bars {
            bar: Mutex::new(None),
        }
    }
}

impl Progress for Bars {
    fn start(&self, what: &str, total: Option<u64>) {
        let bar = match total {
            Some(n) => {
                let b = indicatif::ProgressBar::new(n);
                if let Ok(style) = indicatif::ProgressStyle::with_template(
                    "{msg} [{bar:30}] {bytes}/{total_bytes}",
                ) {
                    b.set_style(style.progress_chars("=> "));
                }
                b
            }
            None => {
                let b = indicatif::ProgressBar::new_spinner();
                b.enable_steady_tick(Duration::from_millis(120));
                b
            }
        };
        bar.set_message(what.to_string());
        if let Ok(mut slot) = self.bar.lock()
            && let Some(old) = slot.replace(bar)
        {
            old.finish_and_clear();
        }
    }

    fn advance(&self, n: u64) {
        if let Ok(slot) = self.bar.lock()
            && let Some(b) = slot.as_ref()
        {
            b.inc(n);
        }
    }

    fn finish(&self, what: &str) {
        if let Ok(mut slot) = self.bar.lock()
            && let Some(b) = slot.take()
        {
            b.finish_and_clear();
            eprintln!("{what}");
        }
    }
}

/// Progress bars only on a terminal.
pub(crate) fn progress() -> Box<dyn Progress> {
    if std::io::stderr().is_terminal() {
        Box::new(Bars::new())
    } else {
        Box::new(NoProgress)
    }
}

// ---------------------------------------------------------------------------
// Opening the index.

/// The index source: `--index`, else config `skills.registry_url`.
pub(crate) fn source(app: &mut App, arg: &IndexArg) -> Result<IndexSource> {
    let text = match &arg.index {
        Some(s) => agent_config::check_registry_source(s)
            .map_err(|m| UsageError(format!("--index {s}: {m}")))?,
        None => app.config()?.skills.registry_url.clone(),
    };
    // A relative directory is taken from the current directory, made absolute so that the
    // stored state is keyed the same from anywhere.
    let text = match text.strip_prefix("file://") {
        Some(path) => path.to_string(),
        None => text,
    };
    let source =
        IndexSource::parse(&text).map_err(|e| UsageError(format!("--index {text}: {e}")))?;
    Ok(match source {
        IndexSource::Path(p) => IndexSource::Path(
            std::fs::canonicalize(&p)
                .or_else(|_| std::path::absolute(&p))
                .unwrap_or(p),
        ),
        other => other,
    })
}

pub(crate) fn trust_store(app: &App) -> Result<TrustStore> {
    Ok(TrustStore::load(&app.paths.trusted_keys_dir())?)
}

pub(crate) fn to_seen(s: RegistrySeen) -> Seen {
    Seen {
        snapshot: s.snapshot,
        skills: s.skills,
    }
}

/// An opened, verified index and what this user had seen from it.
pub(crate) struct Opened {
    /// The verified index.
    pub(crate) index: Index,
    /// The source's identity, the key of what was seen from it.
    pub(crate) id: String,
    /// What was seen from it before (rollback floors).
    pub(crate) seen: Seen,
    /// The store, for install records.
    pub(crate) store: std::sync::Arc<Store>,
}

/// Fetches and verifies the index (signature, expiry, snapshot rollback), then records its
/// snapshot version as seen.
pub(crate) fn open(app: &mut App, arg: &IndexArg, progress: &dyn Progress) -> Result<Opened> {
    let source = source(app, arg)?;
    let id = source.id();
    let store = app.store()?;
    let seen = to_seen(store.registry_seen(&id)?);
    let trust = trust_store(app)?;
    let now = time::OffsetDateTime::now_utc();
    let index = Index::open(
        &source,
        &app.paths.registry_cache_dir(),
        &trust,
        &seen,
        now,
        progress,
    )
    .map_err(|e| anyhow::anyhow!("{e}"))?;
    // The snapshot version is recorded on every successful open; a skill's version only when
    // it is installed (so that an older version can still be pinned with `NAME@REQ` until a
    // newer one was actually installed — `resolve` refuses anything older than that).
    let raised = RegistrySeen {
        snapshot: Some(index.snapshot_version()),
        ..RegistrySeen::default()
    };
    store.raise_registry_seen(&id, &raised)?;
    Ok(Opened {
        index,
        id,
        seen,
        store,
    })
}
