//! The OSV API client against a loopback HTTP server started by the test.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::sync::{Arc, Mutex};

use agent_deps::{Ecosystem, OsvClient, Package, query_online, query_online_blocking};

fn pkg(eco: Ecosystem, name: &str, version: &str) -> Package {
    Package {
        ecosystem: eco,
        name: name.into(),
        version: version.into(),
        file: "x".into(),
        line: 3,
        direct: None,
    }
}

const VULN: &str = r#"{"id": "TEST-2026-0201", "aliases": ["CVE-0000-0201"], "summary": "synthetic",
  "severity": [{"type": "CVSS_V3", "score": "CVSS:3.1/AV:N/AC:L/PR:N/UI:N/S:U/C:H/I:H/A:H"}],
  "affected": [{"package": {"ecosystem": "npm", "name": "minimist"},
    "ranges": [{"type": "SEMVER", "events": [{"introduced": "0"}, {"fixed": "0.2.4"}, {"introduced": "1.0.0"}, {"fixed": "1.2.6"}]}]}]}"#;

/// (method, path, body) of each request served.
type RequestLog = Arc<Mutex<Vec<(String, String, String)>>>;

/// Serves a fixed set of routes; records (method, path, body) of each request.
fn serve(status_vulns: u16) -> (String, RequestLog) {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let base = format!("http://{}", listener.local_addr().unwrap());
    let log = Arc::new(Mutex::new(Vec::new()));
    let log2 = log.clone();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { break };
            let mut reader = BufReader::new(stream.try_clone().unwrap());
            let mut request_line = String::new();
            if reader.read_line(&mut request_line).is_err() {
                continue;
            }
            let mut len = 0usize;
            loop {
                let mut h = String::new();
                reader.read_line(&mut h).unwrap();
                if h == "\r\n" || h.is_empty() {
                    break;
                }
                if let Some(v) = h.to_ascii_lowercase().strip_prefix("content-length:") {
                    len = v.trim().parse().unwrap();
                }
            }
            let mut body = vec![0; len];
            reader.read_exact(&mut body).unwrap();
            let body = String::from_utf8(body).unwrap();
            let mut parts = request_line.split_whitespace();
            let method = parts.next().unwrap_or("").to_string();
            let path = parts.next().unwrap_or("").to_string();
            log2.lock()
                .unwrap()
                .push((method.clone(), path.clone(), body.clone()));
            let (status, resp) = match (method.as_str(), path.as_str()) {
                ("POST", "/v1/querybatch") => {
                    let v: serde_json::Value = serde_json::from_str(&body).unwrap();
                    let results: Vec<serde_json::Value> = v["queries"]
                        .as_array()
                        .unwrap()
                        .iter()
                        .map(|q| {
                            if q["package"]["name"] == "minimist" {
                                serde_json::json!({"vulns": [{"id": "TEST-2026-0201", "modified": "2026-01-01T00:00:00Z"}]})
                            } else {
                                serde_json::json!({})
                            }
                        })
                        .collect();
                    (200, serde_json::json!({ "results": results }).to_string())
                }
                ("GET", "/v1/vulns/TEST-2026-0201") => (status_vulns, VULN.to_string()),
                _ => (404, "{\"code\":5,\"message\":\"Not Found\"}".to_string()),
            };
            let _ = write!(
                stream,
                "HTTP/1.1 {status} X\r\nContent-Type: application/json\r\nContent-Length: {}\r\nConnection: close\r\n\r\n{resp}",
                resp.len()
            );
        }
    });
    (base, log)
}

#[tokio::test]
async fn querybatch_then_vulns() {
    let (base, log) = serve(200);
    let client = OsvClient::with_base_url(format!("{base}/"));
    let packages = vec![
        pkg(Ecosystem::Npm, "lodash", "4.17.21"),
        pkg(Ecosystem::Npm, "minimist", "1.2.5"),
        pkg(Ecosystem::PyPI, "flask", ""),
        pkg(Ecosystem::Npm, "minimist", "0.0.8"),
    ];
    let out = query_online(&client, &packages).await.unwrap();
    let got: Vec<(usize, String, Option<String>, Option<String>)> = out
        .iter()
        .map(|(i, a)| (*i, a.id.clone(), a.fixed.clone(), a.severity_level.clone()))
        .collect();
    assert_eq!(
        got,
        vec![
            (
                1,
                "TEST-2026-0201".into(),
                Some("1.2.6".into()),
                Some("critical".into())
            ),
            (
                3,
                "TEST-2026-0201".into(),
                Some("0.2.4".into()),
                Some("critical".into())
            ),
        ]
    );
    let log = log.lock().unwrap();
    assert_eq!(
        log.len(),
        2,
        "one batch, one vuln fetch for the shared id: {log:?}"
    );
    assert_eq!(log[0].0, "POST");
    assert_eq!(log[0].1, "/v1/querybatch");
    let sent: serde_json::Value = serde_json::from_str(&log[0].2).unwrap();
    assert_eq!(
        sent,
        serde_json::json!({"queries": [
            {"package": {"name": "lodash", "ecosystem": "npm"}, "version": "4.17.21"},
            {"package": {"name": "minimist", "ecosystem": "npm"}, "version": "1.2.5"},
            {"package": {"name": "minimist", "ecosystem": "npm"}, "version": "0.0.8"}
        ]})
    );
    assert_eq!(
        (log[1].0.as_str(), log[1].1.as_str()),
        ("GET", "/v1/vulns/TEST-2026-0201")
    );
}

#[test]
fn blocking_wrapper_and_http_errors() {
    let (base, _log) = serve(500);
    let client = OsvClient::with_base_url(base);
    let err = query_online_blocking(&client, &[pkg(Ecosystem::Npm, "minimist", "1.2.5")])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains("HTTP 500") && err.contains("/v1/vulns/TEST-2026-0201"),
        "{err}"
    );
    // nothing to ask: no request at all
    assert!(query_online_blocking(&client, &[]).unwrap().is_empty());
    // connection refused
    let dead = TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = dead.local_addr().unwrap();
    drop(dead);
    let client = OsvClient::with_base_url(format!("http://{addr}"));
    let err = query_online_blocking(&client, &[pkg(Ecosystem::Npm, "a", "1.0.0")]).unwrap_err();
    assert!(err.to_string().contains("querybatch"), "{err}");
}
