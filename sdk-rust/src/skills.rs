//! Calling other skills (permission `skill:invoke`).
//!
//! The callee runs with its own grants, never the caller's; the call depth
//! is bounded by the host.

use serde::Serialize;
use serde::de::DeserializeOwned;

use crate::host::skills as imp;
use crate::{Error, ErrorKind};

/// Calls `function` (a tool or workflow name) of skill `skill` with `input`
/// serialized as JSON, and decodes its JSON output into `T` (use
/// [`serde_json::Value`] for raw JSON).
///
/// # Errors
///
/// [`Error`] when `skill:invoke` is not granted, the callee fails, or its
/// output does not have the shape of `T` ([`ErrorKind::Decode`]).
pub fn invoke<I, T>(skill: &str, function: &str, input: &I) -> Result<T, Error>
where
    I: Serialize + ?Sized,
    T: DeserializeOwned,
{
    let input = serde_json::to_string(input)
        .map_err(|e| Error::new("skills", ErrorKind::Invalid(format!("input: {e}"))))?;
    let output = invoke_json(skill, function, &input)?;
    serde_json::from_str(&output).map_err(|e| {
        Error::new(
            "skills",
            ErrorKind::Decode(format!("output of `{skill}.{function}`: {e}")),
        )
    })
}

/// Calls `function` of skill `skill` with JSON text `input`; returns the
/// callee's JSON text.
///
/// # Errors
///
/// As [`invoke`], without the decoding.
pub fn invoke_json(skill: &str, function: &str, input: &str) -> Result<String, Error> {
    imp::invoke(skill, function, input).map_err(|e| Error::from_wit("skills", e))
}
