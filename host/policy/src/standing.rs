//! What a run would decide for a skill's declared permission before any use, for listings
//! (`agent skill list|info`, the TUI's skill panel). Pure: reads the store, writes nothing,
//! asks nobody. [`crate::Grants::would_grant`] answers the same for one use inside a run.

use std::fmt;

use agent_manifest::Permission;
use agent_store::{Store, StoreError, StoredDecision};

use crate::AllowList;

/// Where a declared permission stands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Standing {
    /// A `--allow` flag or capability file grants it (for some scope at least).
    AllowedByFlag,
    /// Interactive: an "always" answer is stored.
    Always,
    /// Interactive: a "deny" answer is stored.
    Denied,
    /// Interactive: the user will be asked on first use.
    AskOnFirstUse,
    /// Non-interactive: nothing grants it.
    NotGranted,
}

impl fmt::Display for Standing {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Standing::AllowedByFlag => "allowed by flag",
            Standing::Always => "granted (always)",
            Standing::Denied => "denied (always)",
            Standing::AskOnFirstUse => "ask on first use",
            Standing::NotGranted => "not granted",
        })
    }
}

/// Where `permission` of `skill` stands in a run with `allow`, the answers in `store` and
/// `interactive` or not. The allowlist comes first, then (interactive only) a stored answer.
///
/// # Errors
/// The store could not be read.
pub fn standing(
    skill: &str,
    permission: Permission,
    store: Option<&Store>,
    allow: &AllowList,
    interactive: bool,
) -> Result<Standing, StoreError> {
    let stored = match store {
        Some(s) => s.grant(skill, permission)?,
        None => None,
    };
    Ok(if allow.names(skill, permission) {
        Standing::AllowedByFlag
    } else if let Some(rec) = stored.filter(|_| interactive) {
        match rec.decision {
            StoredDecision::Always => Standing::Always,
            StoredDecision::Deny => Standing::Denied,
        }
    } else if interactive {
        Standing::AskOnFirstUse
    } else {
        Standing::NotGranted
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_store::GrantRecord;

    #[test]
    fn the_allowlist_then_the_stored_answer_then_the_mode() {
        let tmp = tempfile::tempdir().unwrap();
        let store = Store::open(tmp.path().join("agent.redb")).unwrap();
        store
            .put_grant(&GrantRecord::new(
                "s",
                Permission::GitRead,
                StoredDecision::Deny,
                None,
                None,
            ))
            .unwrap();
        let allow = AllowList::from_flags(["s/shell:exec:git"]).unwrap();
        let at = |p, interactive| {
            standing("s", p, Some(&store), &allow, interactive)
                .unwrap()
                .to_string()
        };
        assert_eq!(at(Permission::ShellExec, false), "allowed by flag");
        assert_eq!(at(Permission::GitRead, true), "denied (always)");
        assert_eq!(at(Permission::GitRead, false), "not granted");
        assert_eq!(at(Permission::LlmCall, true), "ask on first use");
        assert_eq!(
            standing("other", Permission::ShellExec, None, &allow, false).unwrap(),
            Standing::NotGranted
        );
    }
}
