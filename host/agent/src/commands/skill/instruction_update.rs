//! `agent skill update [NAME]` of SKILL.md instruction skills installed from an index: each
//! is updated in place through the same path as `agent skill install NAME --index`
//! (the artifact checked against the signed snapshot's versions file, unpacked into a staging
//! directory, content-scanned — a high-severity finding blocks unless `--force`, audited —
//! and renamed over the installed copy under the skills directory's lock). A refused update
//! leaves the installed version as it was.

use anyhow::Result;

use crate::exit;
use crate::index_access::Opened;

/// What updating the instruction skills did.
pub(super) struct Updated {
    /// How many were updated.
    pub(super) count: usize,
    /// The worst exit code.
    pub(super) code: u8,
}

/// Updates each of `installed` (name, installed version) from `opened` to its latest version
/// there; one that fails is reported and the others go on.
pub(super) fn update_instructions(
    app: &mut crate::app::App,
    opened: &Opened,
    installed: &[(String, String)],
    force: bool,
) -> Result<Updated> {
    let mut done = Updated {
        count: 0,
        code: exit::OK,
    };
    for (name, version) in installed {
        let rec = match opened.index.resolve_any(name, None, &opened.seen) {
            Ok(agent_registry::Resolved::Instructions(rec)) => rec,
            Ok(agent_registry::Resolved::Component(rec)) => {
                eprintln!(
                    "error: {name}: the index now publishes {name} {} as a component skill; \
                     remove the SKILL.md skill (`agent skill remove {name}`) and install it \
                     with `agent skill install {name}`",
                    rec.version
                );
                done.code = done.code.max(exit::FAILURE);
                continue;
            }
            Err(e) => {
                eprintln!("error: {name}: {e}");
                done.code = done.code.max(exit::FAILURE);
                continue;
            }
        };
        let current = semver::Version::parse(version).ok();
        if current.as_ref().is_some_and(|c| rec.version <= *c) {
            println!("{name} {version} is up to date");
            continue;
        }
        match super::instructions::install_from_index(app, &opened.index, &rec, &opened.id, force) {
            Ok(code) if code == exit::OK => {
                println!("updated {name} {version} -> {}", rec.version);
                done.count += 1;
            }
            Ok(code) => done.code = done.code.max(code),
            Err(e) => {
                eprintln!("error: {name}: {e:#}; {name} {version} is kept");
                done.code = done.code.max(exit::FAILURE);
            }
        }
    }
    Ok(done)
}
