//! The engine's iOS checks (issue 19 item 5): the iOS rules (spec
//! `rules/ios-sast.yaml`) are apple-dev's `sast_rules_file`
//! (builtin-skills/apple-dev/rules/), loaded from the skill like any
//! security-rule skill's; here are the engine's own: the
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

/// apple-dev's rules file (its `security_rules.sast_rules_file`, signed and
/// embedded with the component). The engine loads it from the skill like
/// any security-rule skill's; the copy compiled in here gives the data-flow
/// pass the rules' texts and lets this crate's tests run the rules.
pub const RULES_FILE: (&str, &str) = (
    "rules/ios-sast.yaml",
    include_str!("../../../../builtin-skills/apple-dev/rules/ios-sast.yaml"),
);

/// Parses apple-dev's rules file.
///
/// # Errors
/// A rule file that does not parse (a defect of this crate; its tests
/// parse it).
pub fn configs() -> anyhow::Result<Vec<SecurityConfig>> {
    let (name, text) = RULES_FILE;
    let cfg = SecurityConfig::parse(text, &Path::new("<built-in apple-dev>").join(name))?;
    Ok(vec![cfg])
}

/// Adds apple-dev's rules to `rules` (as the engine does when it loads the
/// skill).
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
