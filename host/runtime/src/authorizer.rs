//! [`Authorizer`] over the policy crate's [`Grants`]: the grant store, the
//! CI allowlist and the audit log.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use agent_manifest::Permission;
use agent_policy::{Grants, Verdict};

use crate::{Access, AccessRequest, Authorizer};

type Key = (String, String, Permission, Option<String>);

/// Decides through [`Grants`], remembering each decision for the rest of
/// the process so that a skill called many times is asked (and audited)
/// once per permission and scope, not once per call.
pub struct GrantsAuthorizer {
    grants: Arc<Grants>,
    memo: Mutex<HashMap<Key, Access>>,
}

impl GrantsAuthorizer {
    /// Wraps `grants`.
    pub fn new(grants: Arc<Grants>) -> GrantsAuthorizer {
        GrantsAuthorizer {
            grants,
            memo: Mutex::new(HashMap::new()),
        }
    }

    /// The wrapped grants (for denials and revocation).
    pub fn grants(&self) -> &Arc<Grants> {
        &self.grants
    }

    /// Forgets remembered decisions of `skill` (after a revocation).
    pub fn forget(&self, skill: &str) {
        self.memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|k, _| k.0 != skill);
    }
}

impl Authorizer for GrantsAuthorizer {
    fn check(&self, r: &AccessRequest<'_>) -> Access {
        let key = (
            r.skill.to_string(),
            r.manifest.to_string(),
            r.permission,
            r.scope.map(str::to_string),
        );
        if let Some(access) = self
            .memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .get(&key)
        {
            return access.clone();
        }
        let access = match self.grants.check_manifest(
            r.skill,
            Some(r.manifest),
            r.declared,
            r.permission,
            r.scope,
            r.detail,
        ) {
            Verdict::Granted { .. } => Access::Granted,
            Verdict::Denied { reason } => Access::Denied(reason),
            Verdict::Unrecorded { reason } => Access::Unrecorded(reason),
        };
        self.memo
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .insert(key, access.clone());
        access
    }

    fn record_use(&self, skill: &str, capability: &str, target: &str, outcome: &str) {
        if let Err(e) = self.grants.record_use(skill, capability, target, outcome) {
            tracing::error!("could not write the audit log: {e}");
        }
    }
}
