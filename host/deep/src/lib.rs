//! `agent-deep`: the security engine's second, model-backed phase
//! (`agent security-audit --deep`).
//!
//! - [`risk`]: every file scored by risk signals (routes and handlers,
//!   authentication and authorisation, crypto, SQL, deserialization, file
//!   and process APIs, network clients, the static findings' density, recent
//!   churn), each score with its reasons; deterministic.
//! - [`plan`]: the highest-risk files packed into batches within a budget of
//!   characters, and the work items (batch × analysis) the budget of model
//!   calls is spent on, highest risk first.
//! - [`redact`]: secrets replaced by `[REDACTED:<rule>]` in everything sent
//!   to the model ([`redact::RedactingProvider`] wraps the provider, so the
//!   prompts and the read tools' results are both covered).
//! - [`chains`]: related findings (static and the model's) joined into
//!   attack chains with a stable id.
//! - [`report`]: the deep summary and the chains added to the security
//!   engine's JSON, SARIF, Markdown and GitHub outputs.
#![deny(missing_docs)]

pub mod chains;
pub mod plan;
pub mod redact;
pub mod report;
pub mod risk;

/// The three analyses, in the order each batch gets them: (id, what the
/// model is asked).
pub const ANALYSES: &[(&str, &str)] = &[
    (
        "auth-flow",
        "Authentication and authorisation flow: follow each route or handler to the checks that \
         guard it; report missing, bypassable or inconsistent checks.",
    ),
    (
        "taint",
        "Source-to-sink taint across files: follow untrusted input (request parameters, \
         headers, bodies, files, environment) through calls and imports to dangerous sinks \
         (SQL, shell, file paths, URLs fetched, deserialization, templates); read the imported \
         files with read_file when the flow leaves these files.",
    ),
    (
        "business-logic",
        "Business logic: state changes without checks, missing ownership checks, negative or \
         overflowing amounts, race conditions, replayable operations, trust in client-side \
         values.",
    ),
];
