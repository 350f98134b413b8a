//! LLM providers behind one streaming trait.
//!
//! Three wire formats are implemented over `reqwest`, without vendor SDKs:
//! the Anthropic Messages API ([`AnthropicProvider`]), OpenAI-compatible chat
//! completions ([`OpenAiProvider`]) and Ollama's chat API ([`OllamaProvider`]).
//! Each turns the provider's stream into [`StreamEvent`]s, handed to a
//! callback as they arrive, and returns the accumulated [`Completion`].

#![deny(missing_docs)]

mod anthropic;
mod error;
mod http;
pub mod ndjson;
mod ollama;
mod openai;
pub mod sse;
mod types;

use std::future::Future;
use std::pin::Pin;

pub use anthropic::AnthropicProvider;
pub use error::ProviderError;
pub use http::{DEFAULT_MAX_RESPONSE_BYTES, ProviderConfig, RetryPolicy};
pub use ollama::OllamaProvider;
pub use openai::OpenAiProvider;
pub use tokio_util::sync::CancellationToken;
pub use types::{
    Accumulator, Completion, ContentBlock, InvalidToolInput, Message, Request, Role, StopReason,
    StreamEvent, ToolDef, Usage,
};

/// A boxed, sendable future, as returned by [`Provider::stream`].
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// The callback that receives stream events as they arrive.
pub type EventSink<'a> = dyn FnMut(StreamEvent) + Send + 'a;

/// A model provider: sends a [`Request`] and streams the answer.
///
/// Object safe: use it as `Box<dyn Provider>` or `Arc<dyn Provider>`.
pub trait Provider: Send + Sync {
    /// A short name for messages and logs (`anthropic`, `openai`, `ollama`).
    fn name(&self) -> &str;

    /// Sends `req` and streams the answer: every event is passed to
    /// `on_event` as it arrives, and the accumulated assistant message, usage
    /// and stop reason are returned at the end.
    ///
    /// Rate-limit, overload and server errors received before the stream
    /// starts are retried according to the provider's [`RetryPolicy`].
    /// Cancelling `cancel` stops the request (including a retry wait) and
    /// returns [`ProviderError::Cancelled`].
    fn stream<'a>(
        &'a self,
        req: &'a Request,
        cancel: &'a CancellationToken,
        on_event: &'a mut EventSink<'a>,
    ) -> BoxFuture<'a, Result<Completion, ProviderError>>;
}
