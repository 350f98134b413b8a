//! Calls to the user's configured model (permission `llm:call`).
//!
//! The host holds the API keys; every call counts against the turn's budget.

use serde::de::DeserializeOwned;

use crate::host::llm as imp;
use crate::types::{Message, Role};
use crate::{Error, ErrorKind};

/// Completes a single user message; returns the model's text.
///
/// # Errors
///
/// [`Error`] when `llm:call` is not granted, the budget is spent, or the
/// provider fails.
pub fn complete(prompt: &str) -> Result<String, Error> {
    Completion::new().user(prompt).complete()
}

/// Completes a single user message with output constrained to the JSON
/// Schema `schema`, decoded into `T`.
///
/// # Errors
///
/// As [`complete`], and [`ErrorKind::Decode`] when the answer does not have
/// the shape of `T`.
pub fn complete_json<T: DeserializeOwned>(prompt: &str, schema: &str) -> Result<T, Error> {
    Completion::new().user(prompt).complete_json(schema)
}

/// A completion request. Defaults: no system prompt, no messages, the
/// host's token limit and temperature.
#[derive(Debug, Clone, Default)]
pub struct Completion {
    system: Option<String>,
    messages: Vec<Message>,
    max_tokens: Option<u32>,
    temperature: Option<f32>,
}

impl Completion {
    /// An empty request.
    pub fn new() -> Self {
        Completion::default()
    }

    /// Sets the system prompt.
    pub fn system(mut self, text: impl Into<String>) -> Self {
        self.system = Some(text.into());
        self
    }

    /// Adds a message.
    pub fn message(mut self, role: Role, content: impl Into<String>) -> Self {
        self.messages.push(Message {
            role,
            content: content.into(),
        });
        self
    }

    /// Adds a user message.
    pub fn user(self, content: impl Into<String>) -> Self {
        self.message(Role::User, content)
    }

    /// Adds an assistant message.
    pub fn assistant(self, content: impl Into<String>) -> Self {
        self.message(Role::Assistant, content)
    }

    /// Upper bound on output tokens.
    pub fn max_tokens(mut self, tokens: u32) -> Self {
        self.max_tokens = Some(tokens);
        self
    }

    /// Sampling temperature, 0.0 to 1.0.
    pub fn temperature(mut self, temperature: f32) -> Self {
        self.temperature = Some(temperature);
        self
    }

    fn request(&self) -> imp::CompletionRequest {
        imp::CompletionRequest {
            system: self.system.clone(),
            messages: self.messages.clone(),
            max_tokens: self.max_tokens,
            temperature: self.temperature,
        }
    }

    /// Runs the completion; returns the model's text.
    ///
    /// # Errors
    ///
    /// As [`complete`].
    pub fn complete(&self) -> Result<String, Error> {
        imp::complete(&self.request()).map_err(|e| Error::from_wit("llm", e))
    }

    /// Runs the completion with output constrained to the JSON Schema
    /// `schema`, decoded into `T` (use [`serde_json::Value`] for raw JSON).
    ///
    /// # Errors
    ///
    /// As [`complete_json`].
    pub fn complete_json<T: DeserializeOwned>(&self, schema: &str) -> Result<T, Error> {
        let json =
            imp::complete_json(&self.request(), schema).map_err(|e| Error::from_wit("llm", e))?;
        serde_json::from_str(&json).map_err(|e| Error::new("llm", ErrorKind::Decode(e.to_string())))
    }
}
