//! Listing skills without compiling any: manifests and signatures only.

use agent_runtime::{Signer, SkillPackage, TrustPolicy};
use anyhow::Result;

use crate::app::{App, Broken, Discovery, report_broken, warn_unsigned};

/// A skill whose manifest and signature were checked; its component was not
/// compiled (imports and exports are checked when it is loaded to run).
pub struct Listed {
    /// The skill as found.
    pub package: SkillPackage,
    /// Who signed it.
    pub signer: Signer,
}

impl App {
    /// Every skill discovery finds, with its signature checked: what
    /// `agent skill list` shows. Nothing is compiled, so a fresh home lists
    /// as fast as a warm one. Broken skills are reported on stderr and
    /// skipped; a replacement of a built-in that fails its check gives way to
    /// the built-in (with a warning), as when loading.
    pub fn verify_all(&mut self) -> Result<Vec<Listed>> {
        let Discovery {
            packages,
            mut broken,
            mut fallbacks,
        } = self.discover_all()?;
        let trust = self.trust()?;
        let mut listed = Vec::new();
        for package in packages {
            match verify_package(package, &mut fallbacks, &trust) {
                Ok(l) => listed.push(l),
                Err(b) => broken.push(b),
            }
        }
        tracing::debug!(
            "listed {} skills from their manifests and signatures; nothing compiled",
            listed.len()
        );
        report_broken(&broken);
        warn_unsigned(
            listed
                .iter()
                .map(|l| (l.package.manifest.name.as_str(), &l.signer)),
        );
        Ok(listed)
    }
}

fn verify_package(
    package: SkillPackage,
    fallbacks: &mut Vec<SkillPackage>,
    trust: &TrustPolicy,
) -> Result<Listed, Broken> {
    let name = package.manifest.name.clone();
    let location = package
        .dir
        .as_ref()
        .map(|d| d.display().to_string())
        .unwrap_or_else(|| format!("built-in {name}"));
    let e = match agent_runtime::verify(&package, trust) {
        Ok(signer) => return Ok(Listed { package, signer }),
        Err(e) => e,
    };
    let Some(i) = fallbacks.iter().position(|p| p.manifest.name == name) else {
        return Err(Broken {
            location,
            error: e.to_string(),
        });
    };
    eprintln!("warning: skipping skill at {location}: {e}; the built-in `{name}` stays in use");
    let builtin = fallbacks.remove(i);
    agent_runtime::verify(&builtin, trust)
        .map(|signer| Listed {
            package: builtin,
            signer,
        })
        .map_err(|e| Broken {
            location: format!("built-in {name}"),
            error: e.to_string(),
        })
}
