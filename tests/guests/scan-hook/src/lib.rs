//! Test-only security-rule skill that reports an audit somewhere else, as a
//! team would post findings to a chat or a tracker:
//!
//! - scanner `notify-marker`: a finding (rule `NOTIFY-001`, low) on every
//!   line containing `NOTIFY-ME`;
//! - hook `on_security_scan_complete`: POSTs `{"count", "findings": [{"id",
//!   "rule_id", "severity", "file", "line", "scanner"}]}` to the `url` of its
//!   configuration section (`[skills.config.<name>]`), through the `http`
//!   import; an HTTP failure is the hook's error.

use agent_skill_sdk::http::Request;
use agent_skill_sdk::wit::hook_skill::exports::agent::skill::hooks::Guest as Hooks;
use agent_skill_sdk::wit::scanner_skill::exports::agent::skill::scanner::{
    Guest as Scanner, ScanTarget, ScannerSpec,
};
use agent_skill_sdk::wit::tool_skill::agent::skill::types::{
    Confidence, Finding, HookEvent, HookPhase, HookResult, HookSubscription, Location, Severity,
    SkillError,
};
use serde_json::{Value, json};

struct Skill;

const SCANNER: &str = "notify-marker";
const MARKER: &str = "NOTIFY-ME";

impl Scanner for Skill {
    fn list_scanners() -> Vec<ScannerSpec> {
        vec![ScannerSpec {
            name: SCANNER.into(),
            description: format!("lines containing {MARKER}"),
            file_patterns: Vec::new(),
            languages: Vec::new(),
        }]
    }

    fn scan(name: String, target: ScanTarget) -> Result<Vec<Finding>, SkillError> {
        if name != SCANNER {
            return Err(SkillError::NotFound(name));
        }
        Ok(target
            .content
            .lines()
            .enumerate()
            .filter(|(_, l)| l.contains(MARKER))
            .map(|(i, _)| Finding {
                rule_id: "NOTIFY-001".into(),
                title: "Notification marker".into(),
                description: format!("The line contains {MARKER}."),
                severity: Severity::Low,
                category: "logging-monitoring".into(),
                cwe: None,
                owasp: None,
                location: Location {
                    file: target.path.clone(),
                    start_line: i as u32 + 1,
                    end_line: i as u32 + 1,
                    start_column: 0,
                    end_column: 0,
                    function: None,
                },
                evidence: MARKER.into(),
                remediation: "Remove the marker.".into(),
                confidence: Confidence::High,
                references: Vec::new(),
                metadata: Vec::new(),
            })
            .collect())
    }
}

fn severity(s: Severity) -> &'static str {
    match s {
        Severity::Critical => "critical",
        Severity::High => "high",
        Severity::Medium => "medium",
        Severity::Low => "low",
        Severity::Info => "info",
    }
}

impl Hooks for Skill {
    fn subscriptions() -> Vec<HookSubscription> {
        vec![HookSubscription {
            phase: HookPhase::OnSecurityScanComplete,
            priority: 0,
        }]
    }

    fn on_event(event: HookEvent) -> Result<HookResult, SkillError> {
        let config: Value =
            serde_json::from_str(&agent_skill_sdk::config::all_json()).unwrap_or(Value::Null);
        let Some(url) = config.get("url").and_then(Value::as_str) else {
            return Err(SkillError::InvalidInput("no `url` configured".into()));
        };
        let meta = |f: &Finding, key: &str| {
            f.metadata
                .iter()
                .find(|(k, _)| k == key)
                .map(|(_, v)| v.clone())
        };
        let findings: Vec<Value> = event
            .findings
            .iter()
            .map(|f| {
                json!({
                    "id": meta(f, "id"),
                    "rule_id": f.rule_id,
                    "severity": severity(f.severity),
                    "file": f.location.file,
                    "line": f.location.start_line,
                    "scanner": meta(f, "scanner"),
                })
            })
            .collect();
        let body = json!({"count": findings.len(), "findings": findings});
        let response = Request::post(url)
            .json(&body)
            .map_err(|e| SkillError::Failed(e.to_string()))?
            .send()
            .map_err(|e| SkillError::Failed(e.to_string()))?;
        if !response.is_success() {
            return Err(SkillError::Failed(format!(
                "the endpoint answered HTTP {}",
                response.status
            )));
        }
        Ok(HookResult {
            cancel: false,
            cancel_reason: None,
            tool_call: None,
            tool_result: None,
            response: None,
            inject_prompt: None,
        })
    }
}

agent_skill_sdk::wit::scanner_skill::export!(Skill);
agent_skill_sdk::wit::hook_skill::export!(Skill);
