//! Errors of every provider.

/// Why a provider call failed.
#[derive(Debug, thiserror::Error)]
pub enum ProviderError {
    /// No API key was given and the environment variable is not set.
    #[error(
        "no API key: set the {var} environment variable (agent also reads `api_key_file` or \
         `api_key_command` under the provider's section of config.toml)"
    )]
    MissingApiKey {
        /// The environment variable that was consulted.
        var: &'static str,
    },
    /// The provider refused the request (a 4xx status other than 429);
    /// not retried. `message` is the provider's own message, unchanged.
    #[error("{provider} returned HTTP {status}: {message}")]
    Http {
        /// The provider's name.
        provider: String,
        /// The HTTP status code.
        status: u16,
        /// The error message extracted from the provider's response body.
        message: String,
    },
    /// Rate limited, overloaded or a server error, still failing after
    /// every retry.
    #[error("{provider} returned HTTP {status} after {attempts} attempts: {message}")]
    Unavailable {
        /// The provider's name.
        provider: String,
        /// The HTTP status code of the last attempt.
        status: u16,
        /// How many requests were sent.
        attempts: u32,
        /// The error message extracted from the last response body.
        message: String,
    },
    /// The connection failed or broke (after retries, when it failed before
    /// any response).
    #[error("{provider}: transport error: {message}")]
    Transport {
        /// The provider's name.
        provider: String,
        /// What went wrong.
        message: String,
    },
    /// The provider reported an error inside the stream (for example
    /// Anthropic's `overloaded_error`).
    #[error("{provider} stream error ({kind}): {message}")]
    Stream {
        /// The provider's name.
        provider: String,
        /// The error type the provider gave, or `error`.
        kind: String,
        /// The provider's message.
        message: String,
    },
    /// The answer broke off after it had started: the connection failed
    /// mid-stream, or the stream ended before its final event. What was
    /// streamed before the break has been passed to the event callback;
    /// sending the request again may succeed.
    #[error("{provider}: the answer was cut off: {message}")]
    Interrupted {
        /// The provider's name.
        provider: String,
        /// What happened.
        message: String,
    },
    /// The response body grew past the configured cap; reading stopped
    /// there.
    #[error(
        "{provider}: the response exceeded {limit} bytes and was cut there; if this model really sends that much, raise `provider.max_response_bytes` in config.toml"
    )]
    ResponseTooLarge {
        /// The provider's name.
        provider: String,
        /// The cap, in bytes.
        limit: usize,
    },
    /// The stream did not follow the provider's wire format.
    #[error("{provider}: malformed stream: {message}")]
    MalformedStream {
        /// The provider's name.
        provider: String,
        /// What was wrong.
        message: String,
    },
    /// The request body could not be built.
    #[error("invalid request: {0}")]
    InvalidRequest(String),
    /// The call was cancelled.
    #[error("cancelled")]
    Cancelled,
}

impl ProviderError {
    /// Whether retrying the same request later may succeed.
    pub fn is_retryable(&self) -> bool {
        matches!(
            self,
            Self::Unavailable { .. } | Self::Transport { .. } | Self::Interrupted { .. }
        )
    }
}

/// Extracts the provider's error message from a JSON error body: Anthropic
/// and OpenAI (`error.message`), Ollama (`error` as a string), or a top-level
/// `message`; otherwise the body itself, trimmed.
pub(crate) fn error_message(body: &str) -> String {
    if let Ok(v) = crate::types::parse_json(body, "error body") {
        let candidates = [
            v.pointer("/error/message"),
            v.get("error").filter(|e| e.is_string()),
            v.get("message").filter(|e| e.is_string()),
            v.get("detail").filter(|e| e.is_string()),
        ];
        for c in candidates.into_iter().flatten() {
            if let Some(s) = c.as_str() {
                return s.to_string();
            }
        }
    }
    let trimmed = body.trim();
    if trimmed.is_empty() {
        "(empty response body)".to_string()
    } else {
        trimmed.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::error_message;

    #[test]
    fn extracts_messages_from_each_shape() {
        assert_eq!(
            error_message(
                r#"{"type":"error","error":{"type":"authentication_error","message":"invalid x-api-key"}}"#
            ),
            "invalid x-api-key"
        );
        assert_eq!(
            error_message(
                r#"{"error":{"message":"Incorrect API key","type":"invalid_request_error"}}"#
            ),
            "Incorrect API key"
        );
        assert_eq!(
            error_message(r#"{"error":"model 'x' not found"}"#),
            "model 'x' not found"
        );
        assert_eq!(error_message("  Bad Gateway \n"), "Bad Gateway");
        assert_eq!(error_message(""), "(empty response body)");
    }
}
