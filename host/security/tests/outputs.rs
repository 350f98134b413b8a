//! Each writer on a fixed report: golden assertions on the fields consumers use.

use std::collections::BTreeMap;

use agent_deps::{Ecosystem, Package};
use agent_security::output::{self, Format, cyclonedx, github, markdown, sarif};
use agent_security::{
    AuditReport, Confidence, DependencyVulnerability, Finding, Location, ScanError, Severity,
    Thresholds, Verdict,
};
use serde_json::Value;

fn finding(
    rule: &str,
    sev: Severity,
    file: &str,
    line: u32,
    col: (u32, u32),
    category: &str,
    cwe: Option<&str>,
) -> Finding {
    let mut f = Finding::new(
        rule,
        "security-base/sast",
        sev,
        category,
        format!("{rule}: title"),
        Location {
            file: file.into(),
            start_line: line,
            end_line: line,
            start_column: col.0,
            end_column: col.1,
            function: None,
        },
    );
    f.cwe = cwe.map(str::to_string);
    f.description = format!("{rule} description, with a, comma: and colon");
    f.remediation = "Fix it.".into();
    f.evidence = format!("code at {line}");
    f.confidence = Confidence::High;
    f.references = vec!["https://cwe.mitre.org/data/definitions/89.html".into()];
    f.fingerprint(None);
    f
}

pub fn report() -> AuditReport {
    let mut r = AuditReport::empty("/work/proj");
    r.started_at = "2026-01-02T03:04:05Z".into();
    // Deliberately unsorted.
    r.findings = vec![
        finding(
            "PY-WEAK-HASH",
            Severity::Low,
            "app/util.py",
            3,
            (5, 20),
            "cryptography",
            Some("CWE-328"),
        ),
        finding(
            "PY-SQLI-001",
            Severity::High,
            "app/views.py",
            42,
            (9, 31),
            "injection",
            Some("CWE-89"),
        ),
        finding(
            "SECRET-AWS",
            Severity::Critical,
            "config/dev env.py",
            7,
            (1, 0),
            "secrets-exposure",
            Some("CWE-798"),
        ),
        finding(
            "PY-SQLI-001",
            Severity::High,
            "app/views.py",
            12,
            (9, 31),
            "injection",
            Some("CWE-89"),
        ),
        {
            let mut f = finding(
                "DEP-GHSA-xxxx-yyyy-zzzz",
                Severity::Medium,
                "requirements.txt",
                0,
                (0, 0),
                "vulnerable-dependency",
                None,
            );
            f.scanner = "deps".into();
            f.skill_source = None;
            f
        },
    ];
    r.packages = vec![
        Package {
            ecosystem: Ecosystem::PyPI,
            name: "flask".into(),
            version: "0.12".into(),
            file: "requirements.txt".into(),
            line: 1,
            direct: Some(true),
        },
        Package {
            ecosystem: Ecosystem::Npm,
            name: "@scope/left-pad".into(),
            version: "1.0.0".into(),
            file: "web/package-lock.json".into(),
            line: 10,
            direct: None,
        },
    ];
    r.vulnerabilities = vec![DependencyVulnerability {
        id: "GHSA-xxxx-yyyy-zzzz".into(),
        aliases: vec!["CVE-2018-1000656".into()],
        summary: "Denial of service".into(),
        details: "Long text".into(),
        severity: Severity::High,
        cvss_score: Some(7.5),
        cvss_vector: Some("CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:N/I:N/A:H".into()),
        database_severity: None,
        fixed: Some("0.12.3".into()),
        references: vec!["https://example.invalid/advisory".into()],
        purl: "pkg:pypi/flask@0.12".into(),
        package: "flask".into(),
        version: "0.12".into(),
    }];
    r.errors = vec![ScanError {
        scanner: "security-base/config".into(),
        file: Some("k8s/bad.yaml".into()),
        message: "crashed".into(),
    }];
    r.thresholds = Thresholds {
        fail_on: Some(Severity::High),
        max_findings: None,
    };
    r.verdict = Verdict {
        failed: true,
        reasons: vec!["3 findings at or above severity high (fail_on: high)".into()],
        incomplete: false,
    };
    r
}

fn parse(format: Format, r: &AuditReport) -> Value {
    serde_json::from_str(&output::to_string(format, r)).unwrap()
}

#[test]
fn sarif_carries_what_github_uses() {
    let r = report();
    let v = parse(Format::Sarif, &r);
    assert_eq!(v["version"], "2.1.0");
    assert_eq!(v["$schema"], sarif::SCHEMA);
    let run = &v["runs"][0];
    let driver = &run["tool"]["driver"];
    assert_eq!(driver["name"], "agent");
    let rules = driver["rules"].as_array().unwrap();
    let ids: Vec<&str> = rules.iter().map(|r| r["id"].as_str().unwrap()).collect();
    assert_eq!(
        ids,
        [
            "DEP-GHSA-xxxx-yyyy-zzzz",
            "PY-SQLI-001",
            "PY-WEAK-HASH",
            "SECRET-AWS"
        ]
    );
    let sqli = &rules[1];
    assert_eq!(sqli["name"], "PySqli001");
    assert_eq!(sqli["shortDescription"]["text"], "PY-SQLI-001: title");
    assert!(
        sqli["fullDescription"]["text"]
            .as_str()
            .unwrap()
            .contains("description")
    );
    assert!(
        sqli["help"]["text"]
            .as_str()
            .unwrap()
            .contains("Remediation: Fix it.")
    );
    assert!(
        sqli["help"]["markdown"]
            .as_str()
            .unwrap()
            .contains("**Remediation:** Fix it.")
    );
    assert_eq!(sqli["properties"]["security-severity"], "8.0");
    let tags: Vec<&str> = sqli["properties"]["tags"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    assert!(tags.contains(&"security") && tags.contains(&"CWE-89"));
    assert!(tags.contains(&"external/cwe/cwe-89"));
    assert_eq!(rules[3]["properties"]["security-severity"], "9.5");
    assert_eq!(rules[2]["properties"]["security-severity"], "3.0");

    let results = run["results"].as_array().unwrap();
    assert_eq!(results.len(), 5);
    // Sorted: severity, file, line.
    let order: Vec<(String, u64)> = results
        .iter()
        .map(|x| {
            let loc = &x["locations"][0]["physicalLocation"];
            (
                loc["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                loc["region"]["startLine"].as_u64().unwrap_or(0),
            )
        })
        .collect();
    assert_eq!(
        order,
        vec![
            ("config/dev%20env.py".to_string(), 7),
            ("app/views.py".to_string(), 12),
            ("app/views.py".to_string(), 42),
            ("requirements.txt".to_string(), 0),
            ("app/util.py".to_string(), 3),
        ]
    );
    let first = &results[1];
    assert_eq!(first["ruleId"], "PY-SQLI-001");
    assert_eq!(first["ruleIndex"], 1);
    assert_eq!(first["level"], "error");
    let loc = &first["locations"][0]["physicalLocation"];
    assert_eq!(loc["artifactLocation"]["uriBaseId"], "%SRCROOT%");
    assert_eq!(loc["region"]["startLine"], 12);
    assert_eq!(loc["region"]["startColumn"], 9);
    assert_eq!(loc["region"]["endColumn"], 31);
    let fp = first["partialFingerprints"]["primaryLocationLineHash"]
        .as_str()
        .unwrap();
    assert!(fp.ends_with(":1") && fp.len() == 18, "{fp}");
    // A finding on line 0 (the file as a whole) has no region.
    assert!(results[3]["locations"][0]["physicalLocation"]["region"].is_null());
    assert_eq!(results[3]["level"], "warning");
    assert_eq!(results[4]["level"], "note");
    // Secrets never echo evidence into the message.
    assert_eq!(results[0]["message"]["text"], "SECRET-AWS: title");
    assert_eq!(
        run["originalUriBaseIds"]["%SRCROOT%"]["uri"],
        "file:///work/proj/"
    );
    let notes = run["invocations"][0]["toolExecutionNotifications"]
        .as_array()
        .unwrap();
    assert_eq!(notes.len(), 1);
    // Deterministic.
    assert_eq!(
        output::to_string(Format::Sarif, &r),
        output::to_string(Format::Sarif, &r)
    );
}

#[test]
fn json_is_the_sorted_report() {
    let v = parse(Format::Json, &report());
    let f = v["findings"].as_array().unwrap();
    assert_eq!(f.len(), 5);
    assert_eq!(f[0]["rule_id"], "SECRET-AWS");
    assert_eq!(f[0]["severity"], "critical");
    assert_eq!(f[0]["location"]["file"], "config/dev env.py");
    assert_eq!(f[0]["location"]["start_line"], 7);
    assert_eq!(f[0]["confidence"], "high");
    assert_eq!(f[0]["cwe"], "CWE-798");
    assert_eq!(f[1]["location"]["start_line"], 12);
    assert_eq!(v["verdict"]["failed"], true);
    assert_eq!(v["thresholds"]["fail_on"], "high");
    assert_eq!(v["packages"][0]["name"], "flask");
    assert_eq!(v["scope"]["kind"], "full");
    // It reads back.
    let back: AuditReport = serde_json::from_value(v).unwrap();
    assert_eq!(back.findings.len(), 5);
}

#[test]
fn markdown_has_summary_and_groups() {
    let md = markdown::write_string(&report());
    assert!(md.starts_with("# Security audit\n"));
    assert!(md.contains("- Result: **FAILED**\n  - 3 findings at or above severity high"));
    assert!(md.contains("| Severity | Findings |\n|---|---:|\n| Critical | 1 |\n| High | 2 |\n| Medium | 1 |\n| Low | 1 |\n| Info | 0 |\n| **Total** | **5** |"));
    let crit = md.find("### Critical (1)").unwrap();
    let high = md.find("### High (2)").unwrap();
    let low = md.find("### Low (1)").unwrap();
    assert!(crit < high && high < low);
    assert!(md.contains("#### `PY-SQLI-001` PY-SQLI-001: title\n\n- Location: `app/views.py:12`"));
    assert!(md.contains("**Remediation:** Fix it."));
    assert!(md.contains("| flask | 0.12 | GHSA-xxxx-yyyy-zzzz | high | 0.12.3 |"));
    assert!(md.contains("## Errors\n\n- `security-base/config` on `k8s/bad.yaml`: crashed"));
}

#[test]
fn github_annotations() {
    let text = output::to_string(Format::Github, &report());
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 6);
    assert_eq!(
        lines[1],
        "::error file=app/views.py,line=12,col=9,endColumn=31,title=[PY-SQLI-001] PY-SQLI-001%3A title (high)::PY-SQLI-001 description, with a, comma: and colon%0ACWE-89%0ARemediation: Fix it.%0AScanner: security-base/sast"
    );
    assert!(lines[0].starts_with("::error file=config/dev env.py,line=7,col=1,title="));
    assert!(lines[3].starts_with("::warning file=requirements.txt,title="));
    assert!(lines[4].starts_with("::notice file=app/util.py,line=3,col=5,endColumn=20,"));
    assert_eq!(
        lines[5],
        "::warning file=k8s/bad.yaml::scanner security-base/config failed: crashed"
    );
    assert_eq!(github::escape_property("a,b:c%\n"), "a%2Cb%3Ac%25%0A");
}

#[test]
fn cyclonedx_sbom() {
    let r = report();
    let v = parse(Format::Cyclonedx, &r);
    assert_eq!(v["bomFormat"], "CycloneDX");
    assert_eq!(v["specVersion"], "1.6");
    assert_eq!(v["$schema"], cyclonedx::SCHEMA);
    let serial = v["serialNumber"].as_str().unwrap();
    assert!(
        serial.starts_with("urn:uuid:") && serial.len() == 45,
        "{serial}"
    );
    assert_eq!(&serial[23..24], "5");
    assert_eq!(v["metadata"]["timestamp"], "2026-01-02T03:04:05Z");
    assert_eq!(v["metadata"]["tools"]["components"][0]["name"], "agent");
    let comps = v["components"].as_array().unwrap();
    assert_eq!(comps.len(), 2);
    // Sorted by ecosystem (OSV name), name, version.
    assert_eq!(comps[0]["type"], "library");
    assert_eq!(comps[0]["name"], "flask");
    assert_eq!(comps[0]["purl"], "pkg:pypi/flask@0.12");
    assert_eq!(comps[0]["bom-ref"], comps[0]["purl"]);
    assert_eq!(comps[1]["name"], "@scope/left-pad");
    assert_eq!(comps[1]["purl"], "pkg:npm/%40scope/left-pad@1.0.0");
    let vulns = v["vulnerabilities"].as_array().unwrap();
    assert_eq!(vulns[0]["id"], "GHSA-xxxx-yyyy-zzzz");
    assert_eq!(vulns[0]["affects"][0]["ref"], "pkg:pypi/flask@0.12");
    assert_eq!(vulns[0]["ratings"][0]["method"], "CVSSv31");
    assert_eq!(vulns[0]["ratings"][0]["severity"], "high");
    assert_eq!(
        vulns[0]["recommendation"],
        "Upgrade flask to 0.12.3 or later."
    );
    assert_eq!(vulns[0]["references"][0]["id"], "CVE-2018-1000656");
    // Same report, same BOM.
    assert_eq!(
        output::to_string(Format::Cyclonedx, &r),
        output::to_string(Format::Cyclonedx, &r)
    );
}

#[test]
fn format_names() {
    for n in Format::NAMES {
        assert!(n.parse::<Format>().is_ok());
    }
    assert!("xml".parse::<Format>().is_err());
    let _ = BTreeMap::<u8, u8>::new();
}

/// Writes the fixed report's SARIF and CycloneDX to `$AGENT_SECURITY_SAMPLES`
/// (for schema validation by hand).
#[test]
fn write_samples_when_asked() {
    let Ok(dir) = std::env::var("AGENT_SECURITY_SAMPLES") else {
        return;
    };
    let r = report();
    std::fs::write(
        format!("{dir}/sample.sarif"),
        output::to_string(Format::Sarif, &r),
    )
    .unwrap();
    std::fs::write(
        format!("{dir}/sample.cdx.json"),
        output::to_string(Format::Cyclonedx, &r),
    )
    .unwrap();
}
