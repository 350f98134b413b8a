//! A cached artifact that was rejected and recompiled is a security event:
//! it is reported on stderr and recorded in the audit log.

use agent_policy::{AuditLog, AuditRecord};
use agent_runtime::{CacheOutcome, Runtime, Skill};
use agent_store::AgentPaths;

/// Warns about and audits `skill`'s cached artifact when the runtime
/// rejected it ([`CacheOutcome::Recompiled`]); does nothing otherwise.
pub fn report_recompiled(paths: &AgentPaths, runtime: &Runtime, skill: &Skill) {
    let Some(CacheOutcome::Recompiled(why)) = skill.cache else {
        return;
    };
    let artifact = skill
        .digest
        .as_deref()
        .and_then(|d| runtime.cache().artifact_path(d))
        .map(|p| p.display().to_string())
        .unwrap_or_default();
    eprintln!(
        "warning: the cached compiled code of `{}` was discarded and recompiled: {why} \
         ({artifact}); recorded in the audit log",
        skill.name()
    );
    let record = AuditRecord {
        skill: skill.name().to_string(),
        capability: "component-cache".into(),
        target: artifact,
        decision: format!("recompiled: {why}"),
    };
    if let Err(e) = AuditLog::open(paths.audit_log_path()).and_then(|log| log.append(record)) {
        eprintln!("warning: could not record this in the audit log: {e}");
    }
}
