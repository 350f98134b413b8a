//! This skill's own section of the user's configuration,
//! `[skills.config.<skill-name>]` in `config.toml`. Always available, no
//! permission needed; a skill never sees another skill's section.

use serde::de::DeserializeOwned;

use crate::host::config as imp;
use crate::{Error, ErrorKind};

/// One key of the section, decoded into `T`, or `None` when the key is
/// absent.
///
/// # Errors
///
/// [`ErrorKind::Decode`] when the value does not have the shape of `T`; the
/// message names the key.
///
/// # Example
///
/// ```no_run
/// # fn main() -> Result<(), agent_skill_sdk::Error> {
/// let max: u32 = agent_skill_sdk::config::get("max_results")?.unwrap_or(50);
/// # Ok(()) }
/// ```
pub fn get<T: DeserializeOwned>(key: &str) -> Result<Option<T>, Error> {
    match imp::get(key) {
        None => Ok(None),
        Some(json) => decode(&json, &format!("key `{key}`")).map(Some),
    }
}

/// One key of the section as JSON text, or `None` when absent.
pub fn get_json(key: &str) -> Option<String> {
    imp::get(key)
}

/// The whole section decoded into `T` (the section is `{}` when absent, so a
/// struct whose fields all have `#[serde(default)]` always decodes).
///
/// # Errors
///
/// [`ErrorKind::Decode`] when the section does not have the shape of `T`.
pub fn all<T: DeserializeOwned>() -> Result<T, Error> {
    decode(&imp::get_all(), "section")
}

/// The whole section as JSON text (`{}` when absent).
pub fn all_json() -> String {
    imp::get_all()
}

fn decode<T: DeserializeOwned>(json: &str, what: &str) -> Result<T, Error> {
    serde_json::from_str(json)
        .map_err(|e| Error::new("config", ErrorKind::Decode(format!("{what}: {e}"))))
}
