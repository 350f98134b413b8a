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

/// The origin of a URL as `scheme://host[:port]` (port only when explicit
/// and not the scheme's default).
pub(crate) fn origin(url: &Url) -> String {
    let host = url.host_str().unwrap_or_default();
    match url.port() {
        Some(p) => format!("{}://{host}:{p}", url.scheme()),
        None => format!("{}://{host}", url.scheme()),
    }
}

impl HostState {
    fn check_host(&self, url: &Url) -> Result<(), CapabilityError> {
        let host = url.host_str().unwrap_or_default();
        if self
            .skill
            .hosts
            .iter()
            .any(|p| p.matches(url.scheme(), host, url.port()))
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

    async fn fetch(&mut self, req: HttpRequest) -> Result<HttpResponse, CapabilityError> {
        let mut url = Url::parse(&req.url)
            .map_err(|e| CapabilityError::Invalid(format!("URL `{}`: {e}", req.url)))?;
        if !matches!(url.scheme(), "http" | "https") {
            return Err(CapabilityError::Invalid(format!(
                "URL `{}`: only http and https are supported",
                req.url
            )));
        }
        let method = reqwest::Method::from_bytes(req.method.to_ascii_uppercase().as_bytes())
            .map_err(|_| {
                CapabilityError::Invalid(format!("unknown HTTP method `{}`", req.method))
            })?;
        self.check_host(&url)?;
        let detail = format!("{} {}", method, url);
        if let Some(err) =
            denied(self.authorize(Permission::NetFetch, Some(&origin(&url)), &detail))
        {
            return Err(err);
        }
        self.http_count += 1;
        if self.http_count > self.policy.max_http_per_call {
            return Err(CapabilityError::LimitExceeded(format!(
                "at most {} requests per call",
                self.policy.max_http_per_call
            )));
        }
        let timeout = req
            .timeout_ms
            .map(|ms| Duration::from_millis(u64::from(ms)))
            .unwrap_or(self.policy.http_timeout)
            .min(self.policy.http_timeout);
        let timeout = self.clamp_to_deadline(timeout);
        let client = self.ctx.http_client().map_err(CapabilityError::Failed)?;

        let mut redirects = 0;
        let response = loop {
            let mut builder = client.request(method.clone(), url.clone()).timeout(timeout);
            for (k, v) in &req.headers {
                builder = builder.header(k, v);
            }
            if let Some(body) = &req.body {
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
            if response.status().is_redirection()
                && let Some(location) = response.headers().get(reqwest::header::LOCATION)
            {
                redirects += 1;
                if redirects > MAX_REDIRECTS {
                    return Err(CapabilityError::Failed(format!(
                        "more than {MAX_REDIRECTS} redirects"
                    )));
                }
                let next = location
                    .to_str()
                    .ok()
                    .and_then(|l| url.join(l).ok())
                    .ok_or_else(|| {
                        CapabilityError::Failed("redirect with a bad Location".into())
                    })?;
                self.check_host(&next)?;
                url = next;
                continue;
            }
            break response;
        };

        let status = response.status().as_u16();
        let headers = response
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
        let mut response = response;
        loop {
            match response.chunk().await {
                Ok(Some(chunk)) => {
                    let room = cap.saturating_sub(body.len());
                    body.extend_from_slice(&chunk[..chunk.len().min(room)]);
                    if chunk.len() > room {
                        break;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    self.record_use("net:fetch", url.as_str(), "failed reading body");
                    return Err(CapabilityError::Failed(format!("reading {url}: {e}")));
                }
            }
        }
        self.record_use(
            "net:fetch",
            &format!("{method} {url}"),
            &format!("HTTP {status}"),
        );
        Ok(HttpResponse {
            status,
            headers,
            body,
        })
    }
}
