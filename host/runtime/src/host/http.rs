//! The `http` import: requests to the hosts a skill's manifest lists.

use std::time::Duration;

use agent_manifest::Permission;
use reqwest::Url;

use super::denied;
use crate::bindings::agent::skill::http::{self, HttpRequest, HttpResponse};
use crate::bindings::types::CapabilityError;
use crate::state::HostState;

const MAX_REDIRECTS: usize = 5;

impl http::Host for HostState {
    async fn fetch(
        &mut self,
        request: HttpRequest,
    ) -> wasmtime::Result<Result<HttpResponse, CapabilityError>> {
        Ok(self.fetch(request).await)
    }
}

/// The origin of a URL as `scheme://host[:port]`, normalised as every
/// `net:fetch` scope is (`agent_manifest::origin`: case, default port,
/// trailing dot, IPv6, IDNA).
pub(crate) fn origin(url: &Url) -> String {
    agent_manifest::origin(url.as_str()).unwrap_or_else(|| {
        // A parsed http(s) URL always has a host; say what it was if not.
        format!("{}://{}", url.scheme(), url.host_str().unwrap_or_default())
    })
}

impl HostState {
    fn check_host(&self, url: &Url) -> Result<(), CapabilityError> {
        if self
            .skill
            .within_manifest(Permission::NetFetch, url.as_str())
        {
            return Ok(());
        }
        let target = origin(url);
        self.record_use("net:fetch", url.as_str(), "denied: host not in hosts list");
        Err(CapabilityError::Denied(format!(
            "{target} is not in {}'s `hosts` list ({})",
            self.skill.name,
            if self.skill.hosts.is_empty() {
                "empty".to_string()
            } else {
                self.skill
                    .hosts
                    .iter()
                    .map(|h| h.to_string())
                    .collect::<Vec<_>>()
                    .join(", ")
            }
        )))
    }

    /// Checks a URL the request is about to go to (the first, or a redirect's
    /// target): the manifest's `hosts:` list, then the grant for its origin.
    fn admit(&self, url: &Url, method: &reqwest::Method) -> Result<(), CapabilityError> {
        self.check_host(url)?;
        let detail = format!("{method} {url}");
        match denied(self.authorize(Permission::NetFetch, Some(&origin(url)), &detail)) {
            Some(err) => Err(err),
            None => Ok(()),
        }
    }

    async fn fetch(&mut self, req: HttpRequest) -> Result<HttpResponse, CapabilityError> {
        let mut url = Url::parse(&req.url)
            .map_err(|e| CapabilityError::Invalid(format!("URL `{}`: {e}", req.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(CapabilityError::Invalid(format!(
                "URL `{}`: only http and https are supported",
                req.url
            )));
        }
        let mut method = parse_method(&req.method)?;
        self.admit(&url, &method)?;
        self.http_count += 1;
        if self.http_count > self.policy.max_http_per_call {
            return Err(CapabilityError::LimitExceeded(format!(
                "at most {} requests per call",
                self.policy.max_http_per_call
            )));
        }
        self.spend(crate::Use::Http, &format!("{method} {url}"))?;
        let timeout = req
            .timeout_ms
            .map(|ms| Duration::from_millis(u64::from(ms)))
            .unwrap_or(self.policy.http_timeout)
            .min(self.policy.http_timeout);
        let timeout = self.clamp_to_deadline(timeout);
        let client = self.ctx.http_client().map_err(CapabilityError::Failed)?;

        let mut headers = req.headers;
        let mut body = req.body;
        let mut redirects = 0;
        let response = loop {
            let mut builder = client.request(method.clone(), url.clone()).timeout(timeout);
            for (k, v) in &headers {
                builder = builder.header(k, v);
            }
            if let Some(body) = &body {
                builder = builder.body(body.clone());
            }
            let response = match builder.send().await {
                Ok(r) => r,
                Err(e) => {
                    let outcome = if e.is_timeout() {
                        "timed out"
                    } else {
                        "failed"
                    };
                    self.record_use("net:fetch", url.as_str(), outcome);
                    return Err(if e.is_timeout() {
                        CapabilityError::TimedOut
                    } else {
                        CapabilityError::Failed(format!("{method} {url}: {e}"))
                    });
                }
            };
            let status = response.status().as_u16();
            let location = response.headers().get(reqwest::header::LOCATION);
            let (true, Some(location)) = (REDIRECTS.contains(&status), location) else {
                break response;
            };
            redirects += 1;
            if redirects > MAX_REDIRECTS {
                self.record_use("net:fetch", url.as_str(), "failed: too many redirects");
                return Err(CapabilityError::Failed(format!(
                    "{method} {url}: more than {MAX_REDIRECTS} redirects"
                )));
            }
            let next = location
                .to_str()
                .ok()
                .and_then(|l| url.join(l).ok())
                .filter(|u| matches!(u.scheme(), "http" | "https"))
                .ok_or_else(|| {
                    CapabilityError::Failed(format!(
                        "{method} {url}: redirect to a bad or non-http Location"
                    ))
                })?;
            // As browsers and curl do: 303 turns any request into a GET, and
            // 301/302 turn a POST into one; 307/308 repeat the request as is.
            if (status == 303 && method != reqwest::Method::HEAD)
                || (matches!(status, 301 | 302) && method == reqwest::Method::POST)
            {
                method = reqwest::Method::GET;
                body = None;
                headers.retain(|(k, _)| !is_content_header(k));
            }
            // Credentials go to the origin they were written for, never further.
            if origin(&next) != origin(&url) {
                headers.retain(|(k, _)| !is_credential_header(k));
            }
            self.record_use(
                "net:fetch",
                &format!("{method} {url}"),
                &format!("HTTP {status}, redirected to {next}"),
            );
            self.admit(&next, &method)?;
            url = next;
        };

        let status = response.status().as_u16();
        let response_headers = response
            .headers()
            .iter()
            .map(|(k, v)| {
                (
                    k.to_string(),
                    String::from_utf8_lossy(v.as_bytes()).into_owned(),
                )
            })
            .collect();
        let cap = self.policy.http_body_cap;
        let mut body = Vec::new();
        let mut cut = false;
        let mut response = response;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = cap.saturating_sub(body.len());
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if chunk.len() > room {
                        cut = true;
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) if e.is_timeout() => {
                    self.record_use("net:fetch", url.as_str(), "timed out reading body");
                    return Err(CapabilityError::TimedOut);
                }
                Err(e) => {
                    self.record_use("net:fetch", url.as_str(), "failed reading body");
                    return Err(CapabilityError::Failed(format!("reading {url}: {e}")));
                }
            }
        }
        let mut outcome = format!("HTTP {status}");
        if cut {
            outcome.push_str(&format!(", body cut at {cap} bytes"));
            self.host_log(
                "warn",
                format!(
                    "{method} {url}: the response body was cut at {cap} bytes (the host's cap)"
                ),
            );
        }
        self.record_use("net:fetch", &format!("{method} {url}"), &outcome);
        Ok(HttpResponse {
            status,
            headers: response_headers,
            body,
        })
    }
}

/// The statuses that are followed when they carry a `Location`.
const REDIRECTS: [u16; 5] = [301, 302, 303, 307, 308];

/// The methods the `http` import takes (the WIT lists them), upper-cased.
fn parse_method(method: &str) -> Result<reqwest::Method, CapabilityError> {
    use reqwest::Method;
    let upper = method.to_ascii_uppercase();
    [
        Method::GET,
        Method::HEAD,
        Method::POST,
        Method::PUT,
        Method::PATCH,
        Method::DELETE,
    ]
    .into_iter()
    .find(|m| m.as_str() == upper)
    .ok_or_else(|| {
        CapabilityError::Invalid(format!(
            "HTTP method `{method}` is not supported: use GET, HEAD, POST, PUT, PATCH or DELETE"
        ))
    })
}

/// Headers that describe a request body, dropped when a redirect drops the body.
fn is_content_header(name: &str) -> bool {
    let name = name.to_ascii_lowercase();
    name.starts_with("content-") || name == "transfer-encoding"
}

/// Headers that carry credentials, dropped on a redirect to another origin.
fn is_credential_header(name: &str) -> bool {
    ["authorization", "cookie", "proxy-authorization"]
        .iter()
        .any(|h| name.eq_ignore_ascii_case(h))
}
