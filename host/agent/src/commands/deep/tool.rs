//! `report_finding` in the deep analysis: the tool (`crate::report_finding`)
//! belongs to the built-in `security-deep` skill and feeds the analysis'
//! intake (deduplicated against the static findings).

/// The skill the tool belongs to.
pub const OWNER: &str = "security-deep";
