//! A CycloneDX 1.6 JSON SBOM of the dependencies found in lockfiles, with
//! the OSV matches as `vulnerabilities`.

use std::collections::BTreeSet;
use std::io::{self, Write};

use serde_json::{Map, Value, json};

use crate::engine::AuditReport;
use crate::finding::hash16;

/// The schema URI written in `$schema`.
pub const SCHEMA: &str = "http://cyclonedx.org/schema/bom-1.6.schema.json";

/// A serial number derived from the report (same report, same number):
/// a version-5-shaped UUID over the start time, root and packages.
fn serial(report: &AuditReport) -> String {
    let mut parts: Vec<String> = vec![report.started_at.clone(), report.root.clone()];
    parts.extend(report.packages.iter().map(|p| p.purl()));
    let refs: Vec<&str> = parts.iter().map(String::as_str).collect();
    let a = hash16(&refs);
    let b = hash16(&[&a, "cyclonedx"]);
    let hex = format!("{a}{b}");
    let mut bytes: Vec<u8> = (0..16)
        .map(|i| u8::from_str_radix(&hex[i * 2..i * 2 + 2], 16).unwrap_or(0))
        .collect();
    bytes[6] = (bytes[6] & 0x0f) | 0x50;
    bytes[8] = (bytes[8] & 0x3f) | 0x80;
    let h = hex::encode(bytes);
    format!(
        "urn:uuid:{}-{}-{}-{}-{}",
        &h[0..8],
        &h[8..12],
        &h[12..16],
        &h[16..20],
        &h[20..32]
    )
}

fn rating_method(vector: &str) -> Option<&'static str> {
    if vector.starts_with("CVSS:3.1/") {
        Some("CVSSv31")
    } else if vector.starts_with("CVSS:3.0/") {
        Some("CVSSv3")
    } else if vector.starts_with("CVSS:4.0/") {
        Some("CVSSv4")
    } else if vector.starts_with("AV:") || vector.starts_with("(AV:") {
        Some("CVSSv2")
    } else {
        None
    }
}

/// A valid timestamp for `metadata.timestamp`.
fn timestamp(s: &str) -> String {
    let ok = time::OffsetDateTime::parse(s, &time::format_description::well_known::Rfc3339).is_ok();
    if ok {
        s.to_string()
    } else {
        "1970-01-01T00:00:00Z".to_string()
    }
}

/// Builds the BOM as a JSON value.
pub fn to_value(report: &AuditReport) -> Value {
    let mut packages: Vec<&agent_deps::Package> = report.packages.iter().collect();
    packages.sort_by(|a, b| {
        (a.ecosystem.osv_name(), &a.name, &a.version, &a.file).cmp(&(
            b.ecosystem.osv_name(),
            &b.name,
            &b.version,
            &b.file,
        ))
    });
    let mut refs = BTreeSet::new();
    let mut components = Vec::new();
    for p in packages {
        let purl = p.purl();
        if !refs.insert(purl.clone()) {
            continue;
        }
        let mut c = Map::new();
        c.insert("type".into(), json!("library"));
        c.insert("bom-ref".into(), json!(purl));
        c.insert("name".into(), json!(p.name));
        if !p.version.is_empty() {
            c.insert("version".into(), json!(p.version));
        }
        c.insert("purl".into(), json!(purl));
        let mut props = vec![
            json!({ "name": "agent:ecosystem", "value": p.ecosystem.osv_name() }),
            json!({ "name": "agent:lockfile", "value": p.file }),
        ];
        if let Some(direct) = p.direct {
            props.push(json!({ "name": "agent:direct", "value": direct.to_string() }));
        }
        c.insert("properties".into(), json!(props));
        components.push(Value::Object(c));
    }

    let mut vulns_sorted: Vec<_> = report.vulnerabilities.iter().collect();
    vulns_sorted.sort_by(|a, b| (&a.id, &a.purl).cmp(&(&b.id, &b.purl)));
    let mut vuln_refs = BTreeSet::new();
    let mut vulnerabilities = Vec::new();
    for v in vulns_sorted {
        let mut bom_ref = format!("vuln:{}:{}", v.id, v.purl);
        let mut n = 1;
        while !vuln_refs.insert(bom_ref.clone()) {
            n += 1;
            bom_ref = format!("vuln:{}:{}:{n}", v.id, v.purl);
        }
        let source =
            json!({ "name": "OSV", "url": format!("https://osv.dev/vulnerability/{}", v.id) });
        let mut rating = Map::new();
        rating.insert("source".into(), json!({ "name": "OSV" }));
        if let Some(score) = v.cvss_score {
            rating.insert("score".into(), json!(score));
        }
        rating.insert("severity".into(), json!(v.severity.as_str()));
        if let Some(vec) = &v.cvss_vector
            && let Some(method) = rating_method(vec)
        {
            rating.insert("method".into(), json!(method));
            rating.insert("vector".into(), json!(vec));
        }
        let mut obj = Map::new();
        obj.insert("bom-ref".into(), json!(bom_ref));
        obj.insert("id".into(), json!(v.id));
        obj.insert("source".into(), source);
        let aliases: Vec<Value> = v
            .aliases
            .iter()
            .map(|a| {
                let src = if a.starts_with("CVE-") {
                    json!({ "name": "NVD", "url": format!("https://nvd.nist.gov/vuln/detail/{a}") })
                } else {
                    json!({ "name": "OSV", "url": format!("https://osv.dev/vulnerability/{a}") })
                };
                json!({ "id": a, "source": src })
            })
            .collect();
        if !aliases.is_empty() {
            obj.insert("references".into(), json!(aliases));
        }
        obj.insert("ratings".into(), json!([Value::Object(rating)]));
        if !v.summary.is_empty() {
            obj.insert("description".into(), json!(v.summary));
        }
        if !v.details.is_empty() {
            obj.insert("detail".into(), json!(v.details));
        }
        let rec = match &v.fixed {
            Some(f) => format!("Upgrade {} to {f} or later.", v.package),
            None => format!("No fixed version of {} is published.", v.package),
        };
        obj.insert("recommendation".into(), json!(rec));
        let advisories: Vec<Value> = v
            .references
            .iter()
            .filter(|r| r.starts_with("http://") || r.starts_with("https://"))
            .map(|r| json!({ "url": r }))
            .collect();
        if !advisories.is_empty() {
            obj.insert("advisories".into(), json!(advisories));
        }
        let mut affected = json!({ "ref": v.purl });
        if !v.version.is_empty() {
            affected["versions"] = json!([{ "version": v.version, "status": "affected" }]);
        }
        obj.insert("affects".into(), json!([affected]));
        vulnerabilities.push(Value::Object(obj));
    }

    let root_name = std::path::Path::new(&report.root)
        .file_name()
        .map(|n| n.to_string_lossy().into_owned())
        .filter(|n| !n.is_empty())
        .unwrap_or_else(|| "project".into());
    let mut bom = json!({
        "$schema": SCHEMA,
        "bomFormat": "CycloneDX",
        "specVersion": "1.6",
        "serialNumber": serial(report),
        "version": 1,
        "metadata": {
            "timestamp": timestamp(&report.started_at),
            "tools": { "components": [{
                "type": "application",
                "name": report.tool,
                "version": report.version,
            }]},
            "component": {
                "type": "application",
                "bom-ref": "project-root",
                "name": root_name,
            },
        },
        "components": components,
    });
    if !vulnerabilities.is_empty() {
        bom["vulnerabilities"] = json!(vulnerabilities);
    }
    bom
}

/// Writes the SBOM.
///
/// # Errors
/// I/O errors.
pub fn write(out: &mut dyn Write, report: &AuditReport) -> io::Result<()> {
    super::json_out(out, &to_value(report))
}
