//! `agent registry init|publish|verify|resign`: publishing a signed skill index. The
//! verification itself lives in `agent-registry`.

use std::path::Path;

use anyhow::{Context, Result};

use crate::app::App;
use crate::cli::{RegistryCommand, UsageError, exit};
use crate::index_access::trust_store;

/// `365d`, `12h`, `30m`, `90s`, `500ms` ([`agent_bounded::parse_duration`]).
fn parse_expiry(s: &str) -> Result<time::Duration> {
    agent_bounded::parse_duration(s, agent_bounded::BareNumber::Seconds)
        .ok()
        .and_then(|d| time::Duration::try_from(d).ok())
        .ok_or_else(|| {
            UsageError(format!(
                "--expires {s}: expected e.g. `365d`, `12h`, `30m`, `90s`"
            ))
            .into()
        })
}

pub fn registry(app: &mut App, cmd: RegistryCommand) -> Result<u8> {
    match cmd {
        RegistryCommand::Init { dir } => {
            agent_registry::init(&dir).map_err(|e| anyhow::anyhow!("{e}"))?;
            println!("created an empty skill index in {}", dir.display());
            Ok(exit::OK)
        }
        RegistryCommand::Publish {
            component,
            manifest,
            skill_version,
            force,
            key,
            index,
            expires,
        } => {
            let expires_in = parse_expiry(&expires)?;
            if component.is_dir() {
                if manifest.is_some() {
                    return Err(UsageError(format!(
                        "--manifest: {} is a SKILL.md skill directory; --manifest is for a component",
                        component.display()
                    ))
                    .into());
                }
                let key = agent_trust::SecretKey::read(&key)
                    .context("reading the publisher's secret key (--key)")?;
                return crate::commands::registry_instructions::publish(
                    app,
                    &crate::commands::registry_instructions::Publish {
                        dir: &component,
                        version: skill_version.as_deref(),
                        force,
                        key: &key,
                        index: &index,
                        expires_in,
                    },
                );
            }
            let Some(manifest) = manifest else {
                return Err(UsageError(format!(
                    "--manifest: required to publish the component {}",
                    component.display()
                ))
                .into());
            };
            if skill_version.is_some() || force {
                return Err(UsageError(
                    "--skill-version and --force are for a SKILL.md skill directory; a component's version is its SKILL.yaml's".into(),
                )
                .into());
            }
            let key = agent_trust::SecretKey::read(&key)
                .context("reading the publisher's secret key (--key)")?;
            let rec = agent_registry::publish(&agent_registry::PublishRequest {
                component: &component,
                manifest: &manifest,
                key: &key,
                index: &index,
                expires_in,
            })
            .map_err(|e| anyhow::anyhow!("{e}"))?;
            println!(
                "published {} {} to {} (signed by key {})",
                rec.name,
                rec.version,
                index.display(),
                rec.component.key_id
            );
            Ok(exit::OK)
        }
        RegistryCommand::Resign {
            key,
            index,
            expires,
        } => {
            let expires_in = parse_expiry(&expires)?;
            let key = agent_trust::SecretKey::read(&key)
                .context("reading the publisher's secret key (--key)")?;
            let report = agent_registry::resign_index(&index, &key, expires_in)
                .map_err(|e| anyhow::anyhow!("{e}"))?;
            for r in &report.versions {
                println!(
                    "re-signed {} (was key {}, now {})",
                    r.versions_file,
                    r.old_key_id,
                    key.public().id()
                );
            }
            for rel in &report.kept {
                println!(
                    "kept {rel} (SKILL.md instructions: no signature of its own; its digest is in the new snapshot)"
                );
            }
            println!(
                "{}: {} version(s) re-signed by key {}, {} instruction record(s) kept; snapshot {}",
                index.display(),
                report.versions.len(),
                key.public().id(),
                report.kept.len(),
                report.snapshot_version
            );
            Ok(exit::OK)
        }
        RegistryCommand::Verify { dir } => {
            let trust = trust_store(app)?;
            let report =
                agent_registry::verify_index(&dir, Some(&trust), time::OffsetDateTime::now_utc())
                    .map_err(|e| anyhow::anyhow!("{e}"))?;
            verify_report(&dir, &report)
        }
    }
}

fn verify_report(dir: &Path, report: &agent_registry::VerifyReport) -> Result<u8> {
    println!(
        "{}: snapshot {}, {} skill(s), {} version file(s)",
        dir.display(),
        report
            .snapshot_version
            .map_or_else(|| "unreadable".to_string(), |v| v.to_string()),
        report.skills,
        report.versions
    );
    if report.problems.is_empty() {
        println!("every signature and digest checks out");
        Ok(exit::OK)
    } else {
        for p in &report.problems {
            println!("problem: {p}");
        }
        Ok(exit::FAILURE)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn expiry_durations() {
        assert_eq!(parse_expiry("365d").unwrap(), time::Duration::days(365));
        assert_eq!(parse_expiry("12h").unwrap(), time::Duration::hours(12));
        assert_eq!(parse_expiry("1s").unwrap(), time::Duration::seconds(1));
        assert!(parse_expiry("soon").is_err());
        assert!(parse_expiry("3w").is_err());
    }
}
