//! The engine's built-in iOS checks (issue 19 item 5): the iOS rules (spec
//! `rules/ios-sast.yaml` plus Swift data-flow basics) as declarative
//! tree-sitter and regex rules for Swift and Objective-C, compiled into the
//! host and run by the rule engine ([`crate::rules`]) like a security-rule
//! skill's `sast_rules_file`, attributed to `apple-dev`; and the
//! plist/entitlements scanner ([`plist`]), which reads XML and binary
//! property lists; and a small Swift/Objective-C data-flow pass
//! ([`flow`]): secrets in `UserDefaults` through variables, web views
//! loading URLs from deep links or text fields.

mod facts;
pub mod flow;
pub mod plist;
mod usage;

use std::path::Path;

use crate::config::SecurityConfig;
use crate::rules::RuleSet;

/// The skill the iOS rules and the plist scanner are attributed to
/// (findings carry scanner `apple-dev/rules` and `apple-dev/plist`).
pub const SKILL: &str = "apple-dev";

/// The rule files, each added on its own (both hold an `IOS-SEC-001`: one
/// per grammar).
const RULE_FILES: [(&str, &str); 2] = [
    ("ios-sast.yaml", include_str!("ios-sast.yaml")),
    ("ios-objc.yaml", include_str!("ios-objc.yaml")),
];

/// Parses the built-in iOS rule files.
///
/// # Errors
/// A rule file that does not parse (a defect of this crate; its tests
/// parse them).
pub fn configs() -> anyhow::Result<Vec<SecurityConfig>> {
    RULE_FILES
        .iter()
        .map(|(name, text)| {
            SecurityConfig::parse(text, &Path::new("<built-in>").join(name))
                .map_err(anyhow::Error::from)
        })
        .collect()
}

/// Adds the built-in iOS rules to `rules`.
///
/// # Errors
/// See [`configs`].
pub fn add_rules(rules: &mut RuleSet) -> anyhow::Result<()> {
    for cfg in configs()? {
        rules
            .add(&cfg.rules, Some(SKILL))
            .map_err(anyhow::Error::msg)?;
    }
    Ok(())
}

#[cfg(test)]
mod tests;

#[cfg(test)]
mod flow_tests;
