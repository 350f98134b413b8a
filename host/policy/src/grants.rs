//! The decision point: may this skill use this permission now?

use std::collections::{BTreeSet, HashMap, HashSet};
use std::fmt;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use agent_manifest::Permission;
use agent_store::{GrantRecord, Store, StoreError, StoredDecision};

use agent_manifest::{covers, origin};

use crate::allow::{AllowEntry, AllowList};
use crate::approval::{Answer, ApprovalRequest, Approver};
use crate::audit::{AuditError, AuditLog, AuditRecord};

/// Where a grant came from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum GrantSource {
    /// An "always" answer stored in the database.
    Stored,
    /// A "once" answer given earlier in this process.
    Session,
    /// The user answered "once" just now.
    UserOnce,
    /// The user answered "always" just now (and it was stored).
    UserAlways,
    /// A `--allow` flag or capability file (non-interactive runs).
    AllowList,
    /// The config's `auto_approve` names the skill.
    AutoApprove,
    /// `--approve-skills` names the skill: its declared permissions, for this run.
    ApproveSkills,
}

impl GrantSource {
    /// A short name, as written in the audit log after `granted:`.
    pub fn as_str(self) -> &'static str {
        match self {
            GrantSource::Stored => "stored",
            GrantSource::Session => "session",
            GrantSource::UserOnce => "user-once",
            GrantSource::UserAlways => "user-always",
            GrantSource::AllowList => "allowlist",
            GrantSource::AutoApprove => "auto-approve",
            GrantSource::ApproveSkills => "approve-skills",
        }
    }
}

impl fmt::Display for GrantSource {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.as_str())
    }
}

/// The outcome of [`Grants::check`].
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    /// The use may go ahead.
    Granted {
        /// Where the grant came from.
        source: GrantSource,
    },
    /// The use is refused; the guest gets an error carrying `reason`.
    Denied {
        /// Why, in words for the user.
        reason: String,
    },
    /// The decision could not be written to the audit log (it is damaged, or the disk is
    /// full), so nothing is granted. Not a refusal by the user or the manifest: the call
    /// should fail with `reason`, which says what is wrong and what to do, rather than run
    /// on without the permission.
    Unrecorded {
        /// Why, in words for the user.
        reason: String,
    },
}

impl Verdict {
    /// Whether the use may go ahead.
    pub fn is_granted(&self) -> bool {
        matches!(self, Verdict::Granted { .. })
    }
}

/// A refusal, remembered for the summary at the end of a run.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Denial {
    /// The skill refused.
    pub skill: String,
    /// The permission refused.
    pub permission: Permission,
    /// The scope of the refused use, if any.
    pub scope: Option<String>,
    /// Why.
    pub reason: String,
    /// The `--allow` value that would grant it in a non-interactive run, when a flag can.
    pub allow_flag: Option<String>,
}

/// Why [`Grants::revoke`] or [`Grants::record_use`] failed.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum GrantsError {
    /// The database failed.
    #[error(transparent)]
    Store(#[from] StoreError),
    /// The audit log failed.
    #[error(transparent)]
    Audit(#[from] AuditError),
}

enum Mode {
    Interactive {
        store: Arc<Store>,
        approver: Arc<dyn Approver>,
    },
    NonInteractive {
        allow: AllowList,
    },
}

/// `(skill, permission, normalised scope)`.
type Key = (String, Permission, Option<String>);

#[derive(Default)]
struct Session {
    /// "Once" answers (and "always" answers that could not be stored).
    granted: HashSet<Key>,
    /// "Deny" answers that could not be stored.
    denied: HashSet<Key>,
    /// Refusals, deduplicated, in order.
    denials: Vec<Denial>,
    seen_denials: HashSet<Denial>,
}

/// The permission decisions of one process. Share it (`Arc`) across threads.
///
/// Interactive: a stored "deny" refuses, a stored "always" grants (a stored scope limits it to
/// that scope), the config's `auto_approve` grants, a "once" answer given earlier in this
/// process grants the same skill, permission and scope; otherwise the [`Approver`] is asked, one
/// question at a time. "Always" and "deny" answers are stored for the permission as a whole
/// (the manifest already bounds its scopes); "once" is kept in memory only.
///
/// Non-interactive: granted if and only if the [`AllowList`] matches. Neither the approver, the
/// stored answers nor `auto_approve` are consulted; every refusal is remembered for
/// [`Grants::denials`] with the `--allow` value that would grant it.
///
/// Both: an undeclared permission is always refused, and every decision is appended to the
/// audit log. A grant whose audit entry cannot be written is turned into a refusal (fail
/// closed).
pub struct Grants {
    mode: Mode,
    audit: Arc<AuditLog>,
    auto_approve: BTreeSet<String>,
    /// `--allow` grants that also apply in interactive sessions (granted without asking).
    flags: AllowList,
    /// `--approve-skills`: these skills get what they declare, for this process only.
    approved: BTreeSet<String>,
    session: Mutex<Session>,
    /// Serialises questions, so the user is asked one thing at a time and a second thread
    /// waiting on the same question sees the first answer.
    asking: Mutex<()>,
    versions: Mutex<HashMap<String, String>>,
    /// Told of each new refusal as it is recorded (see [`Grants::on_denial`]).
    listeners: Mutex<Vec<DenialListener>>,
}

/// Told of a refusal as it happens; answers whether it still listens.
type DenialListener = Box<dyn Fn(&Denial) -> bool + Send + Sync>;

impl fmt::Debug for Grants {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Grants")
            .field("interactive", &self.is_interactive())
            .field("audit", &self.audit.path())
            .field("auto_approve", &self.auto_approve)
            .finish_non_exhaustive()
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// The scope as remembered for "once" answers: the origin for `net:fetch`, else as given.
fn normalise_scope(permission: Permission, scope: Option<&str>) -> Option<String> {
    let scope = scope.filter(|s| !s.is_empty())?;
    if permission == Permission::NetFetch {
        Some(origin(scope).unwrap_or_else(|| scope.to_string()))
    } else {
        Some(scope.to_string())
    }
}

/// What [`Grants::would_grant`] foresees.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Prospect {
    /// The use would go ahead.
    Granted {
        /// Where the grant would come from.
        source: GrantSource,
    },
    /// The use would be refused.
    Denied {
        /// Why, in words for the user.
        reason: String,
    },
    /// The user would be asked (interactive sessions).
    Ask,
}

/// A decision made without asking, or the question to ask.
enum Foresight<'a> {
    Decided(Decision),
    Ask {
        store: &'a Store,
        approver: &'a Arc<dyn Approver>,
        key: Key,
    },
}

/// A decision before it is audited.
enum Decision {
    Granted(GrantSource),
    Denied {
        kind: &'static str,
        reason: String,
        allow_flag: Option<String>,
    },
}

impl Grants {
    /// Decisions for an interactive session: stored answers in `store`, new questions to
    /// `approver`, every decision to `audit`.
    pub fn interactive(
        store: Arc<Store>,
        approver: Arc<dyn Approver>,
        audit: Arc<AuditLog>,
    ) -> Grants {
        Self::new(Mode::Interactive { store, approver }, audit)
    }

    /// Decisions for a non-interactive run: only what `allow` grants.
    pub fn non_interactive(allow: AllowList, audit: Arc<AuditLog>) -> Grants {
        Self::new(Mode::NonInteractive { allow }, audit)
    }

    fn new(mode: Mode, audit: Arc<AuditLog>) -> Grants {
        Grants {
            mode,
            audit,
            auto_approve: BTreeSet::new(),
            flags: AllowList::new(),
            approved: BTreeSet::new(),
            session: Mutex::new(Session::default()),
            asking: Mutex::new(()),
            versions: Mutex::new(HashMap::new()),
            listeners: Mutex::new(Vec::new()),
        }
    }

    /// The config's `auto_approve`: these skills get their declared permissions without being
    /// asked (interactive sessions only; a stored "deny" still refuses).
    pub fn with_auto_approve(mut self, skills: Vec<String>) -> Grants {
        self.auto_approve = skills.into_iter().collect();
        self
    }

    /// `--allow` flags given to an interactive session: what they match is granted without
    /// asking (a stored "deny" still refuses). Non-interactive runs take their allowlist at
    /// construction.
    pub fn with_allowlist(mut self, allow: AllowList) -> Grants {
        self.flags = allow;
        self
    }

    /// `--approve-skills`: these skills get every permission their manifest declares, for
    /// this process only (nothing is stored; the audit log says `granted:approve-skills`).
    /// Non-interactive runs grant it before the allowlist; interactive sessions where an
    /// `--allow` flag would be (a stored "deny" still refuses).
    pub fn with_approved_skills(mut self, skills: impl IntoIterator<Item = String>) -> Grants {
        self.approved = skills.into_iter().collect();
        self
    }

    /// Whether this is an interactive session.
    pub fn is_interactive(&self) -> bool {
        matches!(self.mode, Mode::Interactive { .. })
    }

    /// Records the version of a loaded skill, so answers stored for it carry the version.
    pub fn note_skill_version(&self, skill: &str, version: &str) {
        lock(&self.versions).insert(skill.to_string(), version.to_string());
    }

    /// Decides whether `skill` may use `permission` on `scope` now. `declared` is whether its
    /// manifest declares the permission; `detail` says what it is about to do (shown to the
    /// user and written to the audit log as the target, or the scope when `detail` is empty).
    ///
    /// Stored answers apply only when they were given for a manifest with the same digest as
    /// `manifest` (see [`Grants::check_manifest`]); this form is for callers without a loaded
    /// manifest, to which only answers stored without a digest apply.
    pub fn check(
        &self,
        skill: &str,
        declared: bool,
        permission: Permission,
        scope: Option<&str>,
        detail: &str,
    ) -> Verdict {
        self.check_manifest(skill, None, declared, permission, scope, detail)
    }

    /// [`Grants::check`] for a skill loaded from the `SKILL.yaml` whose hex SHA-256 is
    /// `manifest`: a stored answer given for another manifest (or stored before answers were
    /// bound to manifests) does not apply, so the user is asked again, and "always"/"deny"
    /// answers are stored bound to `manifest`.
    pub fn check_manifest(
        &self,
        skill: &str,
        manifest: Option<&str>,
        declared: bool,
        permission: Permission,
        scope: Option<&str>,
        detail: &str,
    ) -> Verdict {
        let decision = self.decide(skill, manifest, declared, permission, scope, detail);
        let target = if detail.is_empty() {
            scope.unwrap_or_default()
        } else {
            detail
        };
        let (verdict, audit_decision, denial) = match decision {
            Decision::Granted(source) => (
                Verdict::Granted { source },
                format!("granted:{source}"),
                None,
            ),
            Decision::Denied {
                kind,
                reason,
                allow_flag,
            } => (
                Verdict::Denied {
                    reason: reason.clone(),
                },
                format!("denied:{kind}"),
                Some((reason, allow_flag)),
            ),
        };
        let audited = self.audit.append(AuditRecord {
            skill: skill.to_string(),
            capability: permission.as_str().to_string(),
            target: target.to_string(),
            decision: audit_decision,
        });
        let (verdict, denial) = match (verdict, audited) {
            (verdict, Ok(_)) => (verdict, denial),
            (_, Err(e)) if e.is_damaged() => {
                // Every decision fails the same way until the log is rotated: say so, and how.
                let reason = format!("{skill} may not use {permission}: {e}");
                (
                    Verdict::Unrecorded {
                        reason: reason.clone(),
                    },
                    Some((reason, None)),
                )
            }
            (Verdict::Granted { .. }, Err(e)) => {
                // Usually a full disk: the call fails with the cause, and the next one tries
                // again (the verdict is not remembered), so freeing space is the way back.
                let reason = format!(
                    "{skill} may not use {permission}: the audit log could not be written ({e}); \
                     free space or fix the file, then try again"
                );
                (
                    Verdict::Unrecorded {
                        reason: reason.clone(),
                    },
                    Some((reason, None)),
                )
            }
            (verdict, Err(_)) => (verdict, denial),
        };
        if let Some((reason, allow_flag)) = denial {
            self.remember_denial(Denial {
                skill: skill.to_string(),
                permission,
                scope: scope.map(str::to_string),
                reason,
                allow_flag,
            });
        }
        verdict
    }

    fn decide(
        &self,
        skill: &str,
        manifest: Option<&str>,
        declared: bool,
        permission: Permission,
        scope: Option<&str>,
        detail: &str,
    ) -> Decision {
        let (store, approver, key) =
            match self.foresee(skill, manifest, declared, permission, scope) {
                Foresight::Decided(decision) => return decision,
                Foresight::Ask {
                    store,
                    approver,
                    key,
                } => (store, approver, key),
            };
        // Ask, one question at a time; re-check first, since another thread may have had the
        // same question answered while this one waited.
        let _asking = lock(&self.asking);
        if let Some(decided) = self.known(store, &key, scope, manifest) {
            return decided;
        }
        let request = ApprovalRequest {
            skill: skill.to_string(),
            permission,
            scope: scope.map(str::to_string),
            detail: detail.to_string(),
        };
        match approver.ask(&request) {
            Answer::Once => {
                lock(&self.session).granted.insert(key);
                Decision::Granted(GrantSource::UserOnce)
            }
            Answer::Always => {
                if self
                    .persist(store, skill, manifest, permission, StoredDecision::Always)
                    .is_err()
                {
                    // Still granted as the user asked; kept for this process.
                    lock(&self.session).granted.insert(key);
                }
                Decision::Granted(GrantSource::UserAlways)
            }
            Answer::Deny => {
                if self
                    .persist(store, skill, manifest, permission, StoredDecision::Deny)
                    .is_err()
                {
                    lock(&self.session).denied.insert(key);
                }
                Decision::Denied {
                    kind: "user",
                    reason: format!("the user denied {permission} to {skill}"),
                    allow_flag: None,
                }
            }
        }
    }

    /// The decision as far as it can be made without asking anyone: reads the stored answers,
    /// this session's answers and the allowlist; writes nothing.
    fn foresee(
        &self,
        skill: &str,
        manifest: Option<&str>,
        declared: bool,
        permission: Permission,
        scope: Option<&str>,
    ) -> Foresight<'_> {
        if !declared {
            return Foresight::Decided(Decision::Denied {
                kind: "undeclared",
                reason: format!("{skill} did not declare {permission} in its manifest"),
                allow_flag: None,
            });
        }
        match &self.mode {
            Mode::NonInteractive { allow } => {
                if self.approved.contains(skill) {
                    return Foresight::Decided(Decision::Granted(GrantSource::ApproveSkills));
                }
                if allow.matches(skill, permission, scope) {
                    return Foresight::Decided(Decision::Granted(GrantSource::AllowList));
                }
                let flag = AllowEntry {
                    skill: Some(skill.to_string()),
                    permission,
                    scope: normalise_scope(permission, scope),
                }
                .to_string();
                let what = match scope {
                    Some(s) if !s.is_empty() => format!("{permission} ({s})"),
                    _ => permission.to_string(),
                };
                Foresight::Decided(Decision::Denied {
                    kind: "not-allowed",
                    reason: format!(
                        "{skill} was not granted {what} in this non-interactive run; grant it with --allow {flag}"
                    ),
                    allow_flag: Some(flag),
                })
            }
            Mode::Interactive { store, approver } => {
                let key = (
                    skill.to_string(),
                    permission,
                    normalise_scope(permission, scope),
                );
                if let Some(decided) = self.known(store, &key, scope, manifest) {
                    return Foresight::Decided(decided);
                }
                if self.approved.contains(skill) {
                    return Foresight::Decided(Decision::Granted(GrantSource::ApproveSkills));
                }
                if self.flags.matches(skill, permission, scope) {
                    return Foresight::Decided(Decision::Granted(GrantSource::AllowList));
                }
                Foresight::Ask {
                    store,
                    approver,
                    key,
                }
            }
        }
    }

    /// Would `skill` be allowed to use `permission` on `scope` now? The same decision as
    /// [`Grants::check_manifest`] up to the question it would ask, without side effects:
    /// nothing is written to the audit log or the store, nobody is asked, no denial is
    /// remembered.
    pub fn would_grant(
        &self,
        skill: &str,
        manifest: Option<&str>,
        declared: bool,
        permission: Permission,
        scope: Option<&str>,
    ) -> Prospect {
        match self.foresee(skill, manifest, declared, permission, scope) {
            Foresight::Decided(Decision::Granted(source)) => Prospect::Granted { source },
            Foresight::Decided(Decision::Denied { reason, .. }) => Prospect::Denied { reason },
            Foresight::Ask { .. } => Prospect::Ask,
        }
    }

    /// A decision that needs no question: stored, auto-approved, or answered this session.
    fn known(
        &self,
        store: &Store,
        key: &Key,
        scope: Option<&str>,
        manifest: Option<&str>,
    ) -> Option<Decision> {
        let (skill, permission) = (key.0.as_str(), key.1);
        match store.grant(skill, permission) {
            Err(e) => {
                return Some(Decision::Denied {
                    kind: "store-error",
                    reason: format!(
                        "{skill} may not use {permission}: the stored grants could not be read ({e})"
                    ),
                    allow_flag: None,
                });
            }
            Ok(Some(record))
                if covers(permission, record.scope.as_deref(), scope)
                    && record.manifest_sha256.as_deref() == manifest =>
            {
                return Some(match record.decision {
                    StoredDecision::Always => Decision::Granted(GrantSource::Stored),
                    StoredDecision::Deny => Decision::Denied {
                        kind: "stored",
                        reason: format!(
                            "{permission} was denied to {skill} earlier (undo with `agent skill permissions {skill} --revoke {permission}`)"
                        ),
                        allow_flag: None,
                    },
                });
            }
            Ok(_) => {}
        }
        if self.auto_approve.contains(skill) {
            return Some(Decision::Granted(GrantSource::AutoApprove));
        }
        let session = lock(&self.session);
        if session.denied.contains(key) {
            return Some(Decision::Denied {
                kind: "user",
                reason: format!("the user denied {permission} to {skill}"),
                allow_flag: None,
            });
        }
        if session.granted.contains(key) {
            return Some(Decision::Granted(GrantSource::Session));
        }
        None
    }

    fn persist(
        &self,
        store: &Store,
        skill: &str,
        manifest: Option<&str>,
        permission: Permission,
        decision: StoredDecision,
    ) -> Result<(), StoreError> {
        let version = lock(&self.versions).get(skill).cloned();
        let mut record = GrantRecord::new(skill, permission, decision, None, version);
        record.manifest_sha256 = manifest.map(str::to_string);
        let result = store.put_grant(&record);
        if let Err(e) = &result {
            // Best effort: the failure itself goes to the audit log.
            let _ = self.audit.append(AuditRecord {
                skill: skill.to_string(),
                capability: permission.as_str().to_string(),
                target: String::new(),
                decision: format!("store-failed: {e}"),
            });
        }
        result
    }

    fn remember_denial(&self, denial: Denial) {
        let new = {
            let mut session = lock(&self.session);
            let new = session.seen_denials.insert(denial.clone());
            if new {
                session.denials.push(denial.clone());
            }
            new
        };
        if new {
            lock(&self.listeners).retain(|listener| listener(&denial));
        }
    }

    /// Calls `listener` with each refusal that [`Grants::denials`] gains, at the moment it is
    /// recorded (on the thread that was refused), until `listener` answers `false`. The agent
    /// loop reports denials as events this way instead of reading the list after each call.
    pub fn on_denial(&self, listener: impl Fn(&Denial) -> bool + Send + Sync + 'static) {
        lock(&self.listeners).push(Box::new(listener));
    }

    /// Every refusal of this process, without repeats, in the order they happened.
    pub fn denials(&self) -> Vec<Denial> {
        lock(&self.session).denials.clone()
    }

    /// Appends a capability-use entry (`capability` used on `target`, with `outcome`) to the
    /// audit log. Returns the entry's seq.
    pub fn record_use(
        &self,
        skill: &str,
        capability: &str,
        target: &str,
        outcome: &str,
    ) -> Result<u64, GrantsError> {
        Ok(self.audit.append(AuditRecord {
            skill: skill.to_string(),
            capability: capability.to_string(),
            target: target.to_string(),
            decision: outcome.to_string(),
        })?)
    }

    /// Removes the stored answers of `skill` for `permission` (all its permissions when
    /// `None`), forgets this session's answers for them, and audits the revocation. Returns how
    /// many stored answers were removed (always 0 in a non-interactive run, which has none).
    pub fn revoke(
        &self,
        skill: &str,
        permission: Option<Permission>,
    ) -> Result<usize, GrantsError> {
        let removed = match &self.mode {
            Mode::Interactive { store, .. } => store.revoke(skill, permission)?,
            Mode::NonInteractive { .. } => 0,
        };
        {
            let mut session = lock(&self.session);
            let affected = |k: &Key| k.0 == skill && permission.is_none_or(|p| p == k.1);
            session.granted.retain(|k| !affected(k));
            session.denied.retain(|k| !affected(k));
        }
        self.audit.append(AuditRecord {
            skill: skill.to_string(),
            capability: permission.map_or("*", Permission::as_str).to_string(),
            target: String::new(),
            decision: format!("revoked:{removed}"),
        })?;
        Ok(removed)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::path::{Path, PathBuf};
    use std::sync::atomic::{AtomicUsize, Ordering};

    /// Answers with a fixed answer and counts the questions.
    struct FakeApprover {
        answer: Answer,
        asked: AtomicUsize,
        requests: Mutex<Vec<ApprovalRequest>>,
    }

    impl FakeApprover {
        fn new(answer: Answer) -> Arc<FakeApprover> {
            Arc::new(FakeApprover {
                answer,
                asked: AtomicUsize::new(0),
                requests: Mutex::new(Vec::new()),
            })
        }
        fn asked(&self) -> usize {
            self.asked.load(Ordering::SeqCst)
        }
    }

    impl Approver for FakeApprover {
        fn ask(&self, req: &ApprovalRequest) -> Answer {
            self.asked.fetch_add(1, Ordering::SeqCst);
            self.requests.lock().unwrap().push(req.clone());
            // Give concurrent checks a chance to pile up behind the question.
            std::thread::sleep(std::time::Duration::from_millis(5));
            self.answer
        }
    }

    struct Env {
        _tmp: tempfile::TempDir,
        db: PathBuf,
        log: PathBuf,
    }

    fn env() -> Env {
        let tmp = tempfile::tempdir().unwrap();
        Env {
            db: tmp.path().join("agent.redb"),
            log: tmp.path().join("audit.log"),
            _tmp: tmp,
        }
    }

    fn interactive(env: &Env, approver: Arc<FakeApprover>) -> (Grants, Arc<Store>) {
        let store = Arc::new(Store::open(&env.db).unwrap());
        let audit = Arc::new(AuditLog::open(&env.log).unwrap());
        (
            Grants::interactive(Arc::clone(&store), approver, audit),
            store,
        )
    }

    fn decisions(log: &Path) -> Vec<String> {
        AuditLog::entries(log)
            .unwrap()
            .into_iter()
            .map(|e| format!("{} {} {} {}", e.skill, e.capability, e.target, e.decision))
            .collect()
    }

    fn granted(source: GrantSource) -> Verdict {
        Verdict::Granted { source }
    }

    #[test]
    fn grants_and_store_can_be_shared_across_threads() {
        fn shareable<T: Send + Sync>() {}
        shareable::<Grants>();
        shareable::<Store>();
        shareable::<AuditLog>();
    }

    #[test]
    fn undeclared_is_denied_in_both_modes_without_asking() {
        let env = env();
        let approver = FakeApprover::new(Answer::Always);
        let (grants, _) = interactive(&env, Arc::clone(&approver));
        let v = grants.check(
            "core-tools",
            false,
            Permission::ShellExec,
            Some("git"),
            "run git",
        );
        assert_eq!(
            v,
            Verdict::Denied {
                reason: "core-tools did not declare shell:exec in its manifest".into()
            }
        );
        assert_eq!(approver.asked(), 0);

        let audit = Arc::new(AuditLog::open(&env.log).unwrap());
        let ci = Grants::non_interactive(AllowList::from_flags(["shell:exec"]).unwrap(), audit);
        let v = ci.check("core-tools", false, Permission::ShellExec, None, "");
        assert!(!v.is_granted());
        assert_eq!(ci.denials()[0].allow_flag, None);
        assert_eq!(
            decisions(&env.log),
            vec![
                "core-tools shell:exec run git denied:undeclared",
                "core-tools shell:exec  denied:undeclared"
            ]
        );
    }

    /// `--approve-skills`: the named skill gets what it declares, nothing it
    /// does not, and no other skill gets anything; the audit says where the
    /// grant came from.
    #[test]
    fn approved_skills_get_what_they_declare_and_nothing_else() {
        let env = env();
        let audit = Arc::new(AuditLog::open(&env.log).unwrap());
        let ci = Grants::non_interactive(AllowList::new(), audit)
            .with_approved_skills(["k8s".to_string()]);
        let declared = ci.check("k8s", true, Permission::ShellExec, Some("kubectl"), "");
        assert_eq!(declared, granted(GrantSource::ApproveSkills));
        assert!(
            !ci.check("k8s", false, Permission::NetFetch, None, "")
                .is_granted()
        );
        assert!(
            !ci.check("other", true, Permission::ShellExec, None, "")
                .is_granted()
        );
        assert_eq!(
            decisions(&env.log),
            vec![
                "k8s shell:exec kubectl granted:approve-skills",
                "k8s net:fetch  denied:undeclared",
                "other shell:exec  denied:not-allowed",
            ]
        );
    }

    #[test]
    fn once_is_remembered_in_memory_only() {
        let env = env();
        let approver = FakeApprover::new(Answer::Once);
        let (grants, store) = interactive(&env, Arc::clone(&approver));
        let check = |scope| grants.check("s", true, Permission::ShellExec, scope, "run");
        assert_eq!(check(Some("git")), granted(GrantSource::UserOnce));
        assert_eq!(check(Some("git")), granted(GrantSource::Session));
        assert_eq!(approver.asked(), 1);
        // Another scope is another question.
        assert_eq!(check(Some("cargo")), granted(GrantSource::UserOnce));
        assert_eq!(approver.asked(), 2);
        let req = approver.requests.lock().unwrap()[0].clone();
        assert_eq!(
            req,
            ApprovalRequest {
                skill: "s".into(),
                permission: Permission::ShellExec,
                scope: Some("git".into()),
                detail: "run".into()
            }
        );
        assert_eq!(store.all_grants().unwrap(), vec![]);
        drop(grants);
        drop(store);

        // A new process over the same store asks again.
        let approver2 = FakeApprover::new(Answer::Deny);
        let (grants, _) = interactive(&env, Arc::clone(&approver2));
        assert!(
            !grants
                .check("s", true, Permission::ShellExec, Some("git"), "run")
                .is_granted()
        );
        assert_eq!(approver2.asked(), 1);
    }

    #[test]
    fn once_for_net_fetch_covers_the_origin() {
        let env = env();
        let approver = FakeApprover::new(Answer::Once);
        let (grants, _) = interactive(&env, Arc::clone(&approver));
        let fetch = |url| grants.check("k", true, Permission::NetFetch, Some(url), "GET");
        assert!(fetch("https://api.example.com/a").is_granted());
        assert_eq!(
            fetch("https://api.example.com/b?x"),
            granted(GrantSource::Session)
        );
        assert_eq!(approver.asked(), 1);
        fetch("https://other.example.com/");
        assert_eq!(approver.asked(), 2);
    }

    #[test]
    fn always_and_deny_persist_across_a_new_grants() {
        let env = env();
        let approver = FakeApprover::new(Answer::Always);
        let (grants, store) = interactive(&env, Arc::clone(&approver));
        grants.note_skill_version("s", "1.2.0");
        assert_eq!(
            grants.check("s", true, Permission::FileWrite, None, "write a.txt"),
            granted(GrantSource::UserAlways)
        );
        let rec = store.grant("s", Permission::FileWrite).unwrap().unwrap();
        assert_eq!(rec.decision, StoredDecision::Always);
        assert_eq!(rec.scope, None);
        assert_eq!(rec.skill_version.as_deref(), Some("1.2.0"));
        drop(grants);
        drop(store);

        let deny = FakeApprover::new(Answer::Deny);
        let (grants, store) = interactive(&env, Arc::clone(&deny));
        assert_eq!(
            grants.check(
                "s",
                true,
                Permission::FileWrite,
                Some("b.txt"),
                "write b.txt"
            ),
            granted(GrantSource::Stored)
        );
        assert_eq!(deny.asked(), 0);
        // A different permission is asked, and the deny is stored.
        let v = grants.check("s", true, Permission::NetFetch, None, "fetch");
        assert!(matches!(v, Verdict::Denied { ref reason } if reason.contains("denied net:fetch")));
        assert_eq!(deny.asked(), 1);
        drop(grants);
        drop(store);

        let never = FakeApprover::new(Answer::Always);
        let (grants, _) = interactive(&env, Arc::clone(&never));
        let v = grants.check("s", true, Permission::NetFetch, None, "fetch");
        assert!(
            matches!(v, Verdict::Denied { ref reason } if reason.contains("earlier")),
            "{v:?}"
        );
        assert_eq!(never.asked(), 0);
        let log = decisions(&env.log);
        assert_eq!(
            log,
            vec![
                "s file:write write a.txt granted:user-always",
                "s file:write write b.txt granted:stored",
                "s net:fetch fetch denied:user",
                "s net:fetch fetch denied:stored",
            ]
        );
        AuditLog::verify(&env.log).unwrap();
    }

    #[test]
    fn a_scoped_stored_grant_applies_only_to_its_scope() {
        let env = env();
        let approver = FakeApprover::new(Answer::Once);
        let (grants, store) = interactive(&env, Arc::clone(&approver));
        store
            .put_grant(&GrantRecord::new(
                "s",
                Permission::ShellExec,
                StoredDecision::Always,
                Some("git".into()),
                None,
            ))
            .unwrap();
        store
            .put_grant(&GrantRecord::new(
                "s",
                Permission::NetFetch,
                StoredDecision::Deny,
                Some("https://evil.test".into()),
                None,
            ))
            .unwrap();
        let exec = |p| grants.check("s", true, Permission::ShellExec, Some(p), "");
        assert_eq!(exec("git"), granted(GrantSource::Stored));
        assert_eq!(approver.asked(), 0);
        assert_eq!(exec("rm"), granted(GrantSource::UserOnce));
        assert_eq!(approver.asked(), 1);
        let fetch = |u| grants.check("s", true, Permission::NetFetch, Some(u), "");
        assert!(!fetch("https://evil.test/x").is_granted());
        assert_eq!(approver.asked(), 1);
        assert!(fetch("https://good.test/x").is_granted());
        assert_eq!(approver.asked(), 2);
    }

    #[test]
    fn auto_approve_grants_declared_permissions_but_not_over_a_stored_deny() {
        let env = env();
        let approver = FakeApprover::new(Answer::Deny);
        let (grants, store) = interactive(&env, Arc::clone(&approver));
        let grants = grants.with_auto_approve(vec!["trusted".into()]);
        store
            .put_grant(&GrantRecord::new(
                "trusted",
                Permission::LlmCall,
                StoredDecision::Deny,
                None,
                None,
            ))
            .unwrap();
        assert_eq!(
            grants.check("trusted", true, Permission::FileWrite, None, ""),
            granted(GrantSource::AutoApprove)
        );
        assert!(
            !grants
                .check("trusted", false, Permission::FileWrite, None, "")
                .is_granted()
        );
        assert!(
            !grants
                .check("trusted", true, Permission::LlmCall, None, "")
                .is_granted()
        );
        assert!(
            !grants
                .check("other", true, Permission::FileWrite, None, "")
                .is_granted()
        );
        assert_eq!(approver.asked(), 1);
    }

    #[test]
    fn non_interactive_grants_only_from_the_allowlist_and_reports_denials() {
        let env = env();
        // A stored "always" that non-interactive mode must ignore.
        {
            let store = Store::open(&env.db).unwrap();
            store
                .put_grant(&GrantRecord::new(
                    "s",
                    Permission::GitWrite,
                    StoredDecision::Always,
                    None,
                    None,
                ))
                .unwrap();
        }
        let audit = Arc::new(AuditLog::open(&env.log).unwrap());
        let allow = AllowList::from_flags(["file:read", "s/shell:exec:git"]).unwrap();
        let grants = Grants::non_interactive(allow, audit).with_auto_approve(vec!["s".into()]);
        assert!(!grants.is_interactive());
        assert_eq!(
            grants.check("any", true, Permission::FileRead, None, ""),
            granted(GrantSource::AllowList)
        );
        assert_eq!(
            grants.check("s", true, Permission::ShellExec, Some("git"), "git log"),
            granted(GrantSource::AllowList)
        );
        let v = grants.check("s", true, Permission::ShellExec, Some("rm"), "rm -rf");
        let Verdict::Denied { reason } = v else {
            panic!("{v:?}")
        };
        assert!(reason.contains("--allow s/shell:exec:rm"), "{reason}");
        // Stored grants and auto_approve are not consulted.
        assert!(
            !grants
                .check("s", true, Permission::GitWrite, None, "")
                .is_granted()
        );
        // The same denial twice is reported once.
        grants.check("s", true, Permission::ShellExec, Some("rm"), "rm -rf");
        let v = grants.check(
            "k",
            true,
            Permission::NetFetch,
            Some("https://API.example.com/v1?q"),
            "GET",
        );
        assert!(!v.is_granted());
        let flags: Vec<_> = grants
            .denials()
            .into_iter()
            .map(|d| d.allow_flag.unwrap())
            .collect();
        assert_eq!(
            flags,
            vec![
                "s/shell:exec:rm",
                "s/git:write",
                "k/net:fetch:https://api.example.com"
            ]
        );
        // Every suggested flag parses and would grant what was denied.
        for d in grants.denials() {
            let entry = AllowEntry::parse(d.allow_flag.as_deref().unwrap()).unwrap();
            assert!(entry.matches(&d.skill, d.permission, d.scope.as_deref()));
        }
        assert_eq!(
            decisions(&env.log)[2],
            "s shell:exec rm -rf denied:not-allowed"
        );
    }

    #[test]
    fn revoke_removes_stored_and_session_answers_and_is_audited() {
        let env = env();
        let approver = FakeApprover::new(Answer::Always);
        let (grants, store) = interactive(&env, Arc::clone(&approver));
        grants.check("s", true, Permission::FileWrite, None, "");
        grants.check("s", true, Permission::LlmCall, None, "");
        assert_eq!(store.grants_for("s").unwrap().len(), 2);
        assert_eq!(grants.revoke("s", Some(Permission::FileWrite)).unwrap(), 1);
        assert_eq!(store.grants_for("s").unwrap().len(), 1);
        // Asked again after revocation.
        grants.check("s", true, Permission::FileWrite, None, "");
        assert_eq!(approver.asked(), 3);
        assert_eq!(grants.revoke("s", None).unwrap(), 2);
        assert_eq!(store.grants_for("s").unwrap(), vec![]);
        let log = decisions(&env.log);
        assert!(
            log.contains(&"s file:write  revoked:1".to_string()),
            "{log:?}"
        );
        assert!(log.contains(&"s *  revoked:2".to_string()), "{log:?}");
    }

    #[test]
    fn revoke_forgets_once_answers() {
        let env = env();
        let approver = FakeApprover::new(Answer::Once);
        let (grants, _) = interactive(&env, Arc::clone(&approver));
        grants.check("s", true, Permission::FileRead, None, "");
        grants.check("s", true, Permission::FileRead, None, "");
        assert_eq!(approver.asked(), 1);
        assert_eq!(grants.revoke("s", None).unwrap(), 0);
        grants.check("s", true, Permission::FileRead, None, "");
        assert_eq!(approver.asked(), 2);
    }

    #[test]
    fn concurrent_checks_ask_once() {
        let env = env();
        let approver = FakeApprover::new(Answer::Once);
        let (grants, _) = interactive(&env, Arc::clone(&approver));
        let grants = Arc::new(grants);
        let handles: Vec<_> = (0..8)
            .map(|_| {
                let g = Arc::clone(&grants);
                std::thread::spawn(move || {
                    g.check("s", true, Permission::ShellExec, Some("git"), "")
                        .is_granted()
                })
            })
            .collect();
        for h in handles {
            assert!(h.join().unwrap());
        }
        assert_eq!(approver.asked(), 1);
        assert_eq!(AuditLog::verify(&env.log).unwrap().entries, 8);
    }

    #[test]
    fn record_use_appends_a_capability_entry() {
        let env = env();
        let audit = Arc::new(AuditLog::open(&env.log).unwrap());
        let grants = Grants::non_interactive(AllowList::new(), audit);
        assert_eq!(
            grants.record_use("s", "exec", "git status", "ok").unwrap(),
            1
        );
        assert_eq!(decisions(&env.log), vec!["s exec git status ok"]);
    }

    #[test]
    fn a_grant_that_cannot_be_audited_is_refused() {
        let env = env();
        let audit = Arc::new(AuditLog::open(&env.log).unwrap());
        let grants = Grants::non_interactive(AllowList::from_flags(["file:read"]).unwrap(), audit);
        assert!(
            grants
                .check("s", true, Permission::FileRead, None, "")
                .is_granted()
        );
        // Truncate the log behind its head: appends refuse, so grants must too.
        std::fs::write(&env.log, "").unwrap();
        let v = grants.check("s", true, Permission::FileRead, None, "");
        // Not a denial: the decision could not be recorded, and the reason says how to recover.
        assert!(
            matches!(v, Verdict::Unrecorded { ref reason } if reason.contains("audit log")
                && reason.contains("is damaged")
                && reason.contains("agent audit rotate")),
            "{v:?}"
        );
        assert_eq!(grants.denials().len(), 1);
    }
}
