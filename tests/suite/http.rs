//! The `http` import (permission `net:fetch`) against real HTTP servers on
//! 127.0.0.1: what reaches the server, what the skill gets back, and every
//! refusal — hosts not listed, grants missing or scoped to another origin,
//! redirects leaving the allowlist, methods the WIT does not list — with its
//! audit entry. The component is `tests/guests/fetcher` (agent-skill-sdk).

use std::time::Duration;

use agent_runtime::{Limits, Skill};
use agent_tests::model_server::{ModelServer, Reply};
use serde_json::{Value, json};

use crate::common::{Harness, guest};

/// A plain reply with `status` and a text body.
fn reply(status: u16, body: &str) -> Reply {
    Reply {
        status,
        headers: vec![("content-type".into(), "text/plain".into())],
        body: body.as_bytes().to_vec(),
        split: None,
        cut_at: None,
    }
}

fn redirect(status: u16, location: &str) -> Reply {
    reply(status, "").header("location", location)
}

/// Loads the fetcher with `net:fetch` and `hosts` (origins).
fn fetcher(h: &Harness, hosts: &[&str]) -> Skill {
    let hosts: Vec<String> = hosts.iter().map(|o| format!("\"{o}\"")).collect();
    h.load_guest(
        &guest("guest-fetcher"),
        "fetcher",
        &format!("permissions: [net:fetch]\nhosts: [{}]\n", hosts.join(", ")),
    )
    .expect("the fetcher loads")
}

/// Calls `fetch`; the parsed response, or `Err(error text)`.
async fn fetch(h: &Harness, skill: &Skill, input: Value) -> Result<Value, String> {
    let out = h.call_ok(skill, "fetch", input).await;
    match out.strip_prefix("error: ") {
        Some(e) => Err(e.to_string()),
        None => Ok(serde_json::from_str(&out).expect("the fetcher answers JSON")),
    }
}

fn header<'a>(response: &'a Value, name: &str) -> Option<&'a str> {
    response["headers"]
        .as_array()?
        .iter()
        .find(|h| h[0].as_str().is_some_and(|n| n.eq_ignore_ascii_case(name)))
        .and_then(|h| h[1].as_str())
}

async fn server(script: Vec<Reply>) -> ModelServer {
    ModelServer::start(script).await.expect("server")
}

#[tokio::test]
async fn a_request_reaches_the_listed_host_and_the_response_comes_back() {
    let s = server(vec![
        reply(201, "created").header("x-answer", "42"),
        reply(404, "nothing here"),
    ])
    .await;
    let h = Harness::new(&["net:fetch"]);
    let skill = fetcher(&h, &[s.url()]);
    let r = fetch(
        &h,
        &skill,
        json!({
            "method": "post",
            "url": format!("{}/items?x=1", s.url()),
            "headers": [["content-type", "application/json"], ["x-skill", "yes"]],
            "body": "{\"name\":\"a\"}",
        }),
    )
    .await
    .expect("the request succeeds");
    assert_eq!(r["status"], 201);
    assert_eq!(r["body"], "created");
    assert_eq!(header(&r, "x-answer"), Some("42"));
    // Any status is a response, not an error.
    let r = fetch(&h, &skill, json!({"url": format!("{}/missing", s.url())}))
        .await
        .expect("a 404 is a response");
    assert_eq!(
        (r["status"].as_u64(), r["body"].as_str()),
        (Some(404), Some("nothing here"))
    );

    let seen = s.requests();
    assert_eq!(seen.len(), 2);
    assert_eq!(
        (seen[0].method.as_str(), seen[0].path.as_str()),
        ("POST", "/items?x=1")
    );
    assert_eq!(seen[0].header("x-skill"), Some("yes"));
    assert_eq!(seen[0].body, json!({"name": "a"}));
    assert_eq!(
        (seen[1].method.as_str(), seen[1].path.as_str()),
        ("GET", "/missing")
    );

    let audit = h.audit_of("fetcher");
    let uses: Vec<_> = audit.iter().filter(|(c, _, _)| c == "net:fetch").collect();
    assert!(
        uses.iter()
            .any(|(_, t, d)| t == &format!("POST {}/items?x=1", s.url()) && d == "HTTP 201"),
        "{audit:?}"
    );
    assert!(
        uses.iter().any(|(_, _, d)| d == "granted:allowlist"),
        "{audit:?}"
    );
}

#[tokio::test]
async fn hosts_and_grants_decide_before_anything_is_sent() {
    let listed = server(vec![]).await;
    let other = server(vec![reply(200, "must not be reached")]).await;
    let h = Harness::new(&["net:fetch"]);
    let skill = fetcher(&h, &[listed.url()]);

    // Another port of the same address is another origin.
    let e = fetch(&h, &skill, json!({"url": format!("{}/x", other.url())}))
        .await
        .unwrap_err();
    assert!(
        e.contains(&format!(
            "{} is not in fetcher's `hosts` list ({})",
            other.url(),
            listed.url()
        )),
        "{e}"
    );
    assert!(e.starts_with("http: permission denied"), "{e}");
    // Only http and https; only the methods the WIT lists.
    let e = fetch(&h, &skill, json!({"url": "file:///etc/passwd"}))
        .await
        .unwrap_err();
    assert!(e.contains("only http and https are supported"), "{e}");
    let e = fetch(&h, &skill, json!({"method": "TRACE", "url": listed.url()}))
        .await
        .unwrap_err();
    assert!(
        e.contains(
            "HTTP method `TRACE` is not supported: use GET, HEAD, POST, PUT, PATCH or DELETE"
        ),
        "{e}"
    );
    assert!(other.requests().is_empty() && listed.requests().is_empty());
    assert!(
        h.audit_of("fetcher")
            .iter()
            .any(|(c, t, d)| c == "net:fetch"
                && t == &format!("{}/x", other.url())
                && d == "denied: host not in hosts list"),
        "{:?}",
        h.audit_of("fetcher")
    );

    // Declared and listed, but not granted: the denial names the flag.
    let h = Harness::new(&[]);
    let skill = fetcher(&h, &[listed.url()]);
    let e = fetch(&h, &skill, json!({"url": listed.url()}))
        .await
        .unwrap_err();
    assert!(
        e.contains(&format!("--allow fetcher/net:fetch:{}", listed.url())),
        "{e}"
    );
    // A grant scoped to another origin does not cover this one.
    let h = Harness::new(&["net:fetch:https://api.example.com"]);
    let skill = fetcher(&h, &[listed.url()]);
    let e = fetch(&h, &skill, json!({"url": listed.url()}))
        .await
        .unwrap_err();
    assert!(e.starts_with("http: permission denied"), "{e}");
    assert!(listed.requests().is_empty());
}

#[tokio::test]
async fn redirects_stay_inside_the_allowlist_and_credentials_stay_with_their_origin() {
    let b = server(vec![reply(200, "at b"), reply(200, "at b again")]).await;
    let c = server(vec![reply(200, "must not be reached")]).await;
    let a = server(vec![
        // POST + 302 to another listed origin: followed as a GET without the body,
        // the Authorization header dropped.
        redirect(302, &format!("{}/landing", b.url())),
        // 307 on the same origin: the method, body and credentials are kept.
        redirect(307, "/again"),
        reply(200, "at a"),
        // To an origin that is not listed: refused.
        redirect(301, &format!("{}/elsewhere", c.url())),
    ])
    .await;
    let h = Harness::new(&["net:fetch"]);
    let skill = fetcher(&h, &[a.url(), b.url()]);
    let post = |path: &str| {
        json!({
            "method": "POST",
            "url": format!("{}{path}", a.url()),
            "headers": [["authorization", "Bearer secret"], ["content-type", "application/json"]],
            "body": "{\"n\":1}",
        })
    };
    let r = fetch(&h, &skill, post("/start")).await.expect("followed");
    assert_eq!(r["body"], "at b");
    let r = fetch(&h, &skill, post("/keep")).await.expect("followed");
    assert_eq!(r["body"], "at a");

    let at_a = a.requests();
    let at_b = b.requests();
    assert_eq!(at_b.len(), 1);
    assert_eq!(
        (at_b[0].method.as_str(), at_b[0].path.as_str()),
        ("GET", "/landing")
    );
    assert_eq!(
        at_b[0].header("authorization"),
        None,
        "credentials left their origin"
    );
    assert_eq!(at_b[0].header("content-type"), None);
    assert_eq!(at_b[0].body, Value::Null);
    assert_eq!(at_a.len(), 3);
    assert_eq!(
        (at_a[2].method.as_str(), at_a[2].path.as_str()),
        ("POST", "/again")
    );
    assert_eq!(at_a[2].header("authorization"), Some("Bearer secret"));
    assert_eq!(at_a[2].body, json!({"n": 1}));

    let e = fetch(&h, &skill, json!({"url": format!("{}/out", a.url())}))
        .await
        .unwrap_err();
    assert!(
        e.contains(&format!("{} is not in fetcher's `hosts` list", c.url())),
        "{e}"
    );
    assert!(c.requests().is_empty());

    // A grant scoped to the first origin does not cover a redirect to the second.
    let a2 = server(vec![redirect(308, &format!("{}/scoped", b.url()))]).await;
    let h = Harness::new(&[&format!("net:fetch:{}", a2.url())]);
    let skill = fetcher(&h, &[a2.url(), b.url()]);
    let e = fetch(&h, &skill, json!({"url": a2.url()}))
        .await
        .unwrap_err();
    assert!(e.starts_with("http: permission denied"), "{e}");
    assert!(
        e.contains(&format!("--allow fetcher/net:fetch:{}", b.url())),
        "{e}"
    );
    assert_eq!(
        b.requests().len(),
        1,
        "the scoped redirect must not reach b"
    );
}

#[tokio::test]
async fn redirect_loops_stop_after_five() {
    let s = server(
        (0..10)
            .map(|i| redirect(302, &format!("/hop{i}")))
            .collect(),
    )
    .await;
    let h = Harness::new(&["net:fetch"]);
    let skill = fetcher(&h, &[s.url()]);
    let e = fetch(&h, &skill, json!({"url": s.url()}))
        .await
        .unwrap_err();
    assert!(e.contains("more than 5 redirects"), "{e}");
    assert_eq!(s.requests().len(), 6);
}

#[tokio::test]
async fn bodies_are_cut_at_the_cap_and_the_skill_is_told_in_the_log() {
    let s = server(vec![reply(200, &"x".repeat(100))]).await;
    let limits = Limits {
        http_body_cap: 10,
        ..Limits::default()
    };
    let h = Harness::with_limits(limits, &["net:fetch"]);
    let skill = fetcher(&h, &[s.url()]);
    let (result, logs) = h
        .runtime
        .call_tool(
            &skill,
            &h.ctx,
            "fetch",
            &json!({"url": s.url()}).to_string(),
        )
        .await
        .expect("call");
    let out: Value = serde_json::from_str(&result.expect("tool ok").text).expect("json");
    assert_eq!(out["body"], "x".repeat(10));
    assert!(
        logs.iter()
            .any(|l| l.level == "warn" && l.message.contains("body was cut at 10 bytes")),
        "{logs:?}"
    );
    assert!(
        h.audit_of("fetcher")
            .iter()
            .any(|(_, _, d)| d == "HTTP 200, body cut at 10 bytes"),
        "{:?}",
        h.audit_of("fetcher")
    );
}

#[tokio::test]
async fn requests_per_call_and_time_are_limited() {
    let s = server(vec![
        reply(200, "one"),
        reply(200, "two"),
        reply(200, "three"),
        // Trickles 20 bytes, one per 200 ms: longer than the skill's time limit.
        reply(200, &"y".repeat(20)).split(1, Duration::from_millis(200)),
    ])
    .await;
    let limits = Limits {
        max_http_per_call: 2,
        ..Limits::default()
    };
    let h = Harness::with_limits(limits, &["net:fetch"]);
    let skill = fetcher(&h, &[s.url()]);
    let e = fetch(&h, &skill, json!({"url": s.url(), "times": 3}))
        .await
        .unwrap_err();
    assert!(
        e.contains("limit exceeded: at most 2 requests per call"),
        "{e}"
    );
    assert_eq!(s.requests().len(), 2);
    // The next call has its own count.
    let r = fetch(&h, &skill, json!({"url": s.url()}))
        .await
        .expect("ok");
    assert_eq!(r["body"], "three");

    let e = fetch(&h, &skill, json!({"url": s.url(), "timeout_ms": 300}))
        .await
        .unwrap_err();
    assert_eq!(e, "http: timed out");
}
