//! `agent skill permissions`: a skill's stored decisions, and revoking them.

use agent_manifest::Permission;
use anyhow::{Result, bail};

use crate::app::App;
use crate::cli::exit;

pub(super) fn permissions(app: &mut App, name: &str, revoke: Option<&str>) -> Result<u8> {
    let (packages, _) = app.discover()?;
    let manifest = packages
        .iter()
        .find(|p| p.manifest.name == name)
        .map(|p| p.manifest.clone());
    let store = app.store()?;
    if let Some(which) = revoke {
        let perm = if which == "all" {
            None
        } else {
            Some(
                which
                    .parse::<Permission>()
                    .map_err(|e| anyhow::anyhow!("--revoke: {e}"))?,
            )
        };
        let grants = app.grants()?;
        let removed = grants.grants().revoke(name, perm)?;
        grants.forget(name);
        // Non-interactive Grants hold no store: remove stored answers directly too.
        let removed = if app.interactive {
            removed
        } else {
            store.revoke(name, perm)?
        };
        println!(
            "revoked {removed} stored grant(s) of {name}{}",
            perm.map(|p| format!(" for {p}")).unwrap_or_default()
        );
        return Ok(exit::OK);
    }
    let stored = store.grants_for(name)?;
    match &manifest {
        Some(m) => {
            println!("{} declares:", m.name);
            if m.permissions.is_empty() {
                println!("  (no permissions)");
            }
            for p in &m.permissions {
                let rec = stored.iter().find(|r| r.permission == *p);
                let st = match rec {
                    Some(r) => format!(
                        "{} since {}",
                        format!("{:?}", r.decision).to_lowercase(),
                        r.at
                    ),
                    None => "not granted (asked on first use)".into(),
                };
                println!("  {p:<13} {st:<40} {}", p.describe());
            }
        }
        None => {
            if stored.is_empty() {
                bail!("no skill named `{name}` and no stored grants for it");
            }
            println!("{name} (not installed) has stored grants:");
            for r in &stored {
                println!(
                    "  {:<13} {:?} since {}",
                    r.permission.as_str(),
                    r.decision,
                    r.at
                );
            }
        }
    }
    Ok(exit::OK)
}
