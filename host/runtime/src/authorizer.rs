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
/// once per permission and scope, not once per call. A decision the audit
/// log could not record ([`Access::Unrecorded`]) is not remembered: once
/// the disk has room or the log is rotated, the next call goes ahead.
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
            // Not remembered: once the disk has room again or the log is rotated, the next
            // call is decided (and audited) afresh.
            Verdict::Unrecorded { reason } => return Access::Unrecorded(reason),
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

#[cfg(test)]
mod tests {
    use super::*;
    use agent_policy::{AllowList, AuditLog};

    #[test]
    fn an_unrecorded_decision_is_not_remembered_so_a_rotated_log_lets_calls_go_on() {
        let dir = tempfile::tempdir().unwrap();
        let log = dir.path().join("audit.log");
        let audit = Arc::new(AuditLog::open(&log).unwrap());
        let grants = Grants::non_interactive(AllowList::from_flags(["file:read"]).unwrap(), audit);
        let auth = GrantsAuthorizer::new(Arc::new(grants));
        let request = AccessRequest {
            skill: "s",
            manifest: "m",
            permission: Permission::FileRead,
            declared: true,
            scope: None,
            detail: "",
        };
        // The log is damaged behind the head: the decision cannot be recorded.
        auth.check(&request);
        std::fs::write(&log, "").unwrap();
        auth.forget("s");
        let Access::Unrecorded(reason) = auth.check(&request) else {
            panic!("a decision that cannot be audited went ahead");
        };
        assert!(reason.contains("agent audit rotate"), "{reason}");
        // Rotated: the same process, the same skill, the same permission goes ahead again.
        AuditLog::rotate(&log).unwrap();
        assert_eq!(auth.check(&request), Access::Granted);
        assert!(AuditLog::verify(&log).is_ok());
    }
}
