//! The JSON body of a GitHub pull-request review
//! (`POST /repos/{owner}/{repo}/pulls/{n}/reviews`): `event`, `body`, and
//! one comment per finding on the new side of the diff, so a workflow can
//! post it with `gh api … --input review.json`.

use agent_security::{Finding, Severity, Verdict};
use serde_json::{Value, json};

/// The review: `REQUEST_CHANGES` when the verdict failed, `COMMENT`
/// otherwise; `body` the summary (counts per severity, the reasons, the
/// model's reports `intake_summary`); one comment per finding — `path`,
/// `line` (the last line), `start_line` when it spans several, `side` and
/// `start_side` `RIGHT`, `body` Markdown.
pub fn review(findings: &[Finding], verdict: &Verdict, intake_summary: Option<&str>) -> Value {
    let mut sorted: Vec<&Finding> = findings.iter().collect();
    sorted.sort_by(|a, b| a.sort_key().cmp(&b.sort_key()));
    let comments: Vec<Value> = sorted
        .iter()
        .filter(|f| f.location.start_line >= 1)
        .map(|f| comment(f))
        .collect();
    let mut body = String::from("## agent review\n\n");
    if findings.is_empty() {
        body.push_str("No findings on the changed lines.\n");
    } else {
        let counts: Vec<String> = Severity::ALL
            .iter()
            .filter_map(|s| {
                let n = findings.iter().filter(|f| f.severity == *s).count();
                (n > 0).then(|| format!("{n} {s}"))
            })
            .collect();
        body.push_str(&format!(
            "{} finding{}: {}.\n",
            findings.len(),
            if findings.len() == 1 { "" } else { "s" },
            counts.join(", ")
        ));
    }
    for r in &verdict.reasons {
        body.push_str(&format!("\n- fails: {r}"));
    }
    if let Some(s) = intake_summary {
        body.push_str(&format!("\n\n{s}.\n"));
    }
    json!({
        "event": if verdict.failed { "REQUEST_CHANGES" } else { "COMMENT" },
        "body": body,
        "comments": comments,
    })
}

fn comment(f: &Finding) -> Value {
    let mut body = format!(
        "**{}** ({}, {}): {}\n\n{}",
        f.severity.as_str().to_uppercase(),
        f.category,
        f.rule_id,
        f.title,
        f.description
    );
    if !f.remediation.is_empty() {
        body.push_str(&format!("\n\n**Fix:** {}", f.remediation));
    }
    if let Some(cwe) = &f.cwe {
        body.push_str(&format!("\n\n{cwe}"));
    }
    body.push_str(&format!("\n\n<sub>{} · finding {}</sub>", f.scanner, f.id));
    let end = f.location.end_line.max(f.location.start_line);
    let mut c = json!({
        "path": f.location.file,
        "line": end,
        "side": "RIGHT",
        "body": body,
    });
    if end > f.location.start_line {
        c["start_line"] = json!(f.location.start_line);
        c["start_side"] = json!("RIGHT");
    }
    c
}

#[cfg(test)]
mod tests {
    use super::*;
    use agent_security::Location;

    fn finding(line: u32, end: u32, sev: Severity) -> Finding {
        let mut f = Finding::new(
            "injection",
            "code-review/model",
            sev,
            "injection",
            "SQL built by concatenation",
            Location {
                file: "src/app.py".into(),
                start_line: line,
                end_line: end,
                ..Location::default()
            },
        );
        f.description = "q reaches the query".into();
        f.remediation = "use parameters".into();
        f
    }

    #[test]
    fn comments_on_the_new_side_and_the_event_from_the_verdict() {
        let fs = [finding(4, 4, Severity::High), finding(7, 9, Severity::Low)];
        let failed = Verdict {
            failed: true,
            reasons: vec!["1 finding at or above severity high (fail_on: high)".into()],
            incomplete: false,
        };
        let v = review(&fs, &failed, Some("2 reported by the model: 2 recorded"));
        assert_eq!(v["event"], "REQUEST_CHANGES");
        let body = v["body"].as_str().unwrap();
        assert!(body.contains("2 findings: 1 high, 1 low."), "{body}");
        assert!(body.contains("- fails: 1 finding at or above severity high"));
        let c = v["comments"].as_array().unwrap();
        assert_eq!(c.len(), 2);
        assert_eq!(c[0]["path"], "src/app.py");
        assert_eq!(c[0]["line"], 4);
        assert_eq!(c[0]["side"], "RIGHT");
        assert!(c[0].get("start_line").is_none());
        assert!(
            c[0]["body"]
                .as_str()
                .unwrap()
                .starts_with("**HIGH** (injection, injection): SQL built")
        );
        assert_eq!(c[1]["start_line"], 7);
        assert_eq!(c[1]["line"], 9);
        let ok = Verdict::default();
        assert_eq!(review(&[], &ok, None)["event"], "COMMENT");
    }
}
