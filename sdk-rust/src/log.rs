//! Logging to the host. Always available, no permission needed.
//!
//! Messages go to the host's log and, with `--verbose`, to the user. The host
//! caps how many messages and how many bytes a call may log. Standard output
//! and standard error are not the log: use these functions.

use crate::host::log as imp;

pub use crate::host::types::LogLevel as Level;

/// Logs `message` at `level`.
pub fn log(level: Level, message: impl AsRef<str>) {
    imp::log(level, message.as_ref());
}

/// Logs at [`Level::Trace`].
pub fn trace(message: impl AsRef<str>) {
    log(Level::Trace, message);
}

/// Logs at [`Level::Debug`].
pub fn debug(message: impl AsRef<str>) {
    log(Level::Debug, message);
}

/// Logs at [`Level::Info`].
pub fn info(message: impl AsRef<str>) {
    log(Level::Info, message);
}

/// Logs at [`Level::Warn`].
pub fn warn(message: impl AsRef<str>) {
    log(Level::Warn, message);
}

/// Logs at [`Level::Error`].
pub fn error(message: impl AsRef<str>) {
    log(Level::Error, message);
}
