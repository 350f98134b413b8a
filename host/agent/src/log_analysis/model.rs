//! The model's part of a log analysis (waiting for the host-tool seam).

use anyhow::Result;

use super::Job;
use crate::app::App;
use crate::cli::UsageError;

pub(crate) fn analyse(_app: &mut App, _job: Job) -> Result<u8> {
    Err(UsageError("the model analysis is not wired yet; use --templates".into()).into())
}
