//! Configuration, and sending a request with retries.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::error::{ProviderError, error_message};

/// When and how often to retry rate-limited, overloaded and failed requests.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct RetryPolicy {
    /// The most requests sent in all (1 means no retry).
    pub max_attempts: u32,
    /// The wait before the first retry, doubled for each further one.
    pub base_delay: Duration,
    /// The longest wait between attempts, `retry-after` included.
    pub max_delay: Duration,
}

impl Default for RetryPolicy {
    fn default() -> Self {
        Self {
            max_attempts: 4,
            base_delay: Duration::from_millis(500),
            max_delay: Duration::from_secs(60),
        }
    }
}

impl RetryPolicy {
    /// No retries.
    pub fn none() -> Self {
        Self {
            max_attempts: 1,
            ..Self::default()
        }
    }

    /// The backoff before retry number `retry` (0-based): exponential from
    /// `base_delay`, plus up to 50% random jitter, capped at `max_delay`.
    pub fn backoff(&self, retry: u32) -> Duration {
        let exp = self
            .base_delay
            .saturating_mul(2u32.saturating_pow(retry.min(20)));
        let jitter_ms = (exp.as_millis() as u64 / 2).max(1);
        let jitter = Duration::from_millis(random_u64() % jitter_ms);
        exp.saturating_add(jitter).min(self.max_delay)
    }
}

fn random_u64() -> u64 {
    use std::collections::hash_map::RandomState;
    use std::hash::{BuildHasher, Hasher};
    let mut h = RandomState::new().build_hasher();
    h.write_u128(
        std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish()
}

/// Where a provider is and how to talk to it.
#[derive(Debug, Clone)]
pub struct ProviderConfig {
    /// The API's base URL (no trailing slash needed).
    pub base_url: String,
    /// The API key; when `None`, read from the provider's environment
    /// variable (`ANTHROPIC_API_KEY`, `OPENAI_API_KEY`; Ollama needs none).
    pub api_key: Option<String>,
    /// The model used when a [`crate::Request`] leaves `model` empty.
    pub model: String,
    /// The retry policy.
    pub retry: RetryPolicy,
    /// Timeout for connecting.
    pub connect_timeout: Duration,
    /// The most bytes one response body may have; reading stops with
    /// [`ProviderError::ResponseTooLarge`] beyond it. This also bounds the
    /// stream parsers' buffers, which never hold more than the body.
    pub max_response_bytes: usize,
}

/// The default [`ProviderConfig::max_response_bytes`]: 8 MiB, far above any
/// real answer (`max_tokens` of text is a few hundred KB).
pub const DEFAULT_MAX_RESPONSE_BYTES: usize = 8 * 1024 * 1024;

impl ProviderConfig {
    /// The model a request asks for, or the configured one when it names none.
    pub fn model_for<'a>(&'a self, req: &'a crate::Request) -> &'a str {
        if req.model.is_empty() {
            &self.model
        } else {
            &req.model
        }
    }

    /// Anthropic's official API (`https://api.anthropic.com`).
    pub fn anthropic(model: impl Into<String>) -> Self {
        Self::with_base("https://api.anthropic.com", model)
    }

    /// OpenAI's official API (`https://api.openai.com/v1`).
    pub fn openai(model: impl Into<String>) -> Self {
        Self::with_base("https://api.openai.com/v1", model)
    }

    /// A local Ollama (`http://localhost:11434`).
    pub fn ollama(model: impl Into<String>) -> Self {
        Self::with_base("http://localhost:11434", model)
    }

    fn with_base(base: &str, model: impl Into<String>) -> Self {
        Self {
            base_url: base.to_string(),
            api_key: None,
            model: model.into(),
            retry: RetryPolicy::default(),
            connect_timeout: Duration::from_secs(30),
            max_response_bytes: DEFAULT_MAX_RESPONSE_BYTES,
        }
    }

    /// Sets the cap on a response body's size, in bytes.
    pub fn max_response_bytes(mut self, bytes: usize) -> Self {
        self.max_response_bytes = bytes;
        self
    }

    /// Sets the base URL.
    pub fn base_url(mut self, url: impl Into<String>) -> Self {
        self.base_url = url.into();
        self
    }

    /// Sets the API key.
    pub fn api_key(mut self, key: impl Into<String>) -> Self {
        self.api_key = Some(key.into());
        self
    }

    /// Sets the retry policy.
    pub fn retry(mut self, retry: RetryPolicy) -> Self {
        self.retry = retry;
        self
    }

    pub(crate) fn url(&self, path: &str) -> String {
        format!("{}{}", self.base_url.trim_end_matches('/'), path)
    }

    /// The key given, or the environment variable `var`, or an error naming it.
    pub(crate) fn resolve_key(&self, var: &'static str) -> Result<String, ProviderError> {
        if let Some(k) = self.api_key.as_ref().filter(|k| !k.is_empty()) {
            return Ok(k.clone());
        }
        match std::env::var(var) {
            Ok(k) if !k.is_empty() => Ok(k),
            _ => Err(ProviderError::MissingApiKey { var }),
        }
    }

    pub(crate) fn client(&self) -> Result<reqwest::Client, ProviderError> {
        agent_tls::client_builder()
            .connect_timeout(self.connect_timeout)
            .build()
            .map_err(|e| ProviderError::InvalidRequest(format!("HTTP client: {e}")))
    }
}

fn retryable_status(status: u16) -> bool {
    matches!(status, 408 | 409 | 429 | 500 | 502 | 503 | 504 | 529)
}

/// `retry-after-ms` or `retry-after` (seconds) from the response headers.
fn retry_after(headers: &reqwest::header::HeaderMap) -> Option<Duration> {
    let get = |name: &str| headers.get(name).and_then(|v| v.to_str().ok());
    if let Some(ms) = get("retry-after-ms").and_then(|v| v.trim().parse::<f64>().ok())
        && ms.is_finite()
        && ms >= 0.0
    {
        return Some(Duration::from_secs_f64(ms / 1000.0));
    }
    get("retry-after")
        .and_then(|v| v.trim().parse::<f64>().ok())
        .filter(|s| s.is_finite() && *s >= 0.0)
        .map(Duration::from_secs_f64)
}

/// Sleeps, unless cancelled first.
async fn sleep(d: Duration, cancel: &CancellationToken) -> Result<(), ProviderError> {
    tokio::select! {
        _ = cancel.cancelled() => Err(ProviderError::Cancelled),
        _ = tokio::time::sleep(d) => Ok(()),
    }
}

/// Sends the request built by `build` until it gets a success status,
/// retrying retryable statuses and connection failures per `policy`.
pub(crate) async fn send_with_retry(
    provider: &str,
    policy: &RetryPolicy,
    cancel: &CancellationToken,
    build: impl Fn() -> reqwest::RequestBuilder,
) -> Result<reqwest::Response, ProviderError> {
    let max = policy.max_attempts.max(1);
    let mut attempt = 0;
    loop {
        attempt += 1;
        let sent = tokio::select! {
            _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            r = build().send() => r,
        };
        let resp = match sent {
            Ok(r) => r,
            Err(e) => {
                if attempt >= max || !(e.is_connect() || e.is_timeout()) {
                    return Err(ProviderError::Transport {
                        provider: provider.to_string(),
                        message: error_chain(&e),
                    });
                }
                sleep(policy.backoff(attempt - 1), cancel).await?;
                continue;
            }
        };
        let status = resp.status().as_u16();
        if resp.status().is_success() {
            return Ok(resp);
        }
        let wait = retry_after(resp.headers());
        let body = tokio::select! {
            _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            b = resp.text() => b.unwrap_or_default(),
        };
        let message = error_message(&body);
        if !retryable_status(status) {
            return Err(ProviderError::Http {
                provider: provider.to_string(),
                status,
                message,
            });
        }
        if attempt >= max {
            return Err(ProviderError::Unavailable {
                provider: provider.to_string(),
                status,
                attempts: attempt,
                message,
            });
        }
        let delay = wait
            .unwrap_or_else(|| policy.backoff(attempt - 1))
            .min(policy.max_delay);
        sleep(delay, cancel).await?;
    }
}

/// A streamed response body, read piece by piece under a size cap.
pub(crate) struct Body {
    provider: &'static str,
    resp: reqwest::Response,
    read: usize,
    limit: usize,
}

impl Body {
    /// Reads `resp`, allowing at most `limit` bytes.
    pub(crate) fn new(provider: &'static str, resp: reqwest::Response, limit: usize) -> Self {
        Self {
            provider,
            resp,
            read: 0,
            limit,
        }
    }

    /// The next piece of the body, or `None` at its end. A broken
    /// connection is [`ProviderError::Interrupted`]; a body growing past the
    /// cap is [`ProviderError::ResponseTooLarge`], before the piece is kept.
    pub(crate) async fn next(
        &mut self,
        cancel: &CancellationToken,
    ) -> Result<Option<Vec<u8>>, ProviderError> {
        let piece = tokio::select! {
            _ = cancel.cancelled() => return Err(ProviderError::Cancelled),
            c = self.resp.chunk() => c.map_err(|e| ProviderError::Interrupted {
                provider: self.provider.to_string(),
                message: format!("the connection broke mid-answer: {}", error_chain(&e)),
            })?,
        };
        let Some(piece) = piece else {
            return Ok(None);
        };
        self.read = self.read.saturating_add(piece.len());
        if self.read > self.limit {
            return Err(ProviderError::ResponseTooLarge {
                provider: self.provider.to_string(),
                limit: self.limit,
            });
        }
        Ok(Some(piece.to_vec()))
    }

    /// The error for a stream that ended cleanly but before `what` (its
    /// final event): the answer was cut off.
    pub(crate) fn ended_before(&self, what: &str) -> ProviderError {
        ProviderError::Interrupted {
            provider: self.provider.to_string(),
            message: format!("the stream ended before {what}"),
        }
    }
}

fn error_chain(e: &dyn std::error::Error) -> String {
    let mut s = e.to_string();
    let mut src = e.source();
    while let Some(inner) = src {
        s.push_str(": ");
        s.push_str(&inner.to_string());
        src = inner.source();
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backoff_grows_and_is_capped() {
        let p = RetryPolicy {
            max_attempts: 5,
            base_delay: Duration::from_millis(100),
            max_delay: Duration::from_millis(1000),
        };
        for _ in 0..20 {
            let d0 = p.backoff(0);
            assert!(d0 >= Duration::from_millis(100) && d0 < Duration::from_millis(150));
            let d2 = p.backoff(2);
            assert!(d2 >= Duration::from_millis(400) && d2 < Duration::from_millis(600));
            assert_eq!(p.backoff(10), Duration::from_millis(1000));
        }
    }

    #[test]
    fn missing_key_names_the_variable() {
        let cfg = ProviderConfig::anthropic("m");
        let err = cfg
            .resolve_key("AGENT_PROVIDERS_TEST_SURELY_UNSET_KEY")
            .unwrap_err();
        assert!(
            err.to_string()
                .contains("AGENT_PROVIDERS_TEST_SURELY_UNSET_KEY")
        );
        assert_eq!(cfg.api_key("k").resolve_key("X").ok().as_deref(), Some("k"));
    }
}
