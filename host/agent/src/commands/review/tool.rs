//! `report_finding` in the review: the tool (`crate::report_finding`) belongs
//! to the built-in `code-review` skill and feeds the review's intake.

/// The skill the tool belongs to.
pub const OWNER: &str = "code-review";
