//! `agent keys ...` and `agent audit ...`

use agent_policy::AuditLog;
use agent_trust::{PublicKey, SecretKey, TrustStore};
use anyhow::{Context, Result};

use crate::app::App;
use crate::cli::{AuditCommand, KeysCommand, exit};

pub fn keys(app: &mut App, cmd: KeysCommand) -> Result<u8> {
    let trusted_dir = app.paths.trusted_keys_dir();
    match cmd {
        KeysCommand::Generate { name, out, trust } => {
            if !agent_manifest::is_skill_name(&name) {
                anyhow::bail!("--name `{name}`: use lowercase letters, digits and hyphens");
            }
            let dir = out.unwrap_or_else(|| app.paths.keys_dir());
            let key = SecretKey::generate()?;
            let (secret, public) = key.write_pair(&dir, &name)?;
            println!("key id:     {}", key.public().id());
            println!(
                "secret key: {} (keep it private; never commit it)",
                secret.display()
            );
            println!(
                "public key: {} (give this to users: `agent keys trust {}`)",
                public.display(),
                public.display()
            );
            if trust {
                TrustStore::load(&trusted_dir)?.trust(key.public(), &name)?;
                println!("trusted:    yes");
            }
        }
        KeysCommand::List => {
            let store = TrustStore::load(&trusted_dir)?;
            println!("trusted publisher keys ({}):", trusted_dir.display());
            if store.keys().is_empty() {
                println!("  (none — trust one with `agent keys trust FILE.pub`)");
            }
            for k in store.keys() {
                println!("  {}  {}", k.key.id(), k.name);
            }
            let own = app.paths.keys_dir();
            let mut mine: Vec<_> = std::fs::read_dir(&own)
                .map(|d| {
                    d.flatten()
                        .map(|e| e.path())
                        .filter(|p| p.extension().is_some_and(|e| e == "pub"))
                        .collect()
                })
                .unwrap_or_default();
            mine.sort();
            println!("your keys ({}):", own.display());
            if mine.is_empty() {
                println!("  (none — create one with `agent keys generate`)");
            }
            for p in mine {
                let text = std::fs::read_to_string(&p)
                    .with_context(|| format!("reading {}", p.display()))?;
                match PublicKey::parse(&text) {
                    Ok((k, _)) => {
                        let trusted = if store.is_trusted(&k) {
                            " (trusted)"
                        } else {
                            ""
                        };
                        println!("  {}  {}{trusted}", k.id(), p.display());
                    }
                    Err(e) => println!("  ?  {}: {e}", p.display()),
                }
            }
        }
        KeysCommand::Trust { file, name } => {
            let text = std::fs::read_to_string(&file)
                .with_context(|| format!("reading {}", file.display()))?;
            let (key, comment) =
                PublicKey::parse(&text).map_err(|e| anyhow::anyhow!("{}: {e}", file.display()))?;
            // A key file without a comment is named after the file it came from.
            let name = name
                .or_else(|| (!comment.trim().is_empty()).then_some(comment))
                .unwrap_or_else(|| file.display().to_string());
            let new = TrustStore::load(&trusted_dir)?.trust(key, &name)?;
            if new {
                println!("trusted key {} ({name})", key.id());
            } else {
                println!("key {} was already trusted", key.id());
            }
        }
        KeysCommand::Untrust { id } => {
            let removed = TrustStore::load(&trusted_dir)?.untrust(&id)?;
            println!(
                "no longer trusting key {} ({})",
                removed.key.id(),
                removed.name
            );
        }
    }
    Ok(exit::OK)
}

pub fn audit(app: &mut App, cmd: AuditCommand) -> Result<u8> {
    let path = app.paths.audit_log_path();
    match cmd {
        AuditCommand::Verify { log } => {
            let default = log.is_none();
            let path = log.unwrap_or(path);
            match AuditLog::verify(&path) {
                Ok(report) => {
                    println!(
                        "audit log {}: {} entries, hash chain intact",
                        path.display(),
                        report.entries
                    );
                    if let Some(r) = report.rotated_from {
                        println!(
                            "it continues the log sealed by `agent audit rotate` as {} ({}; report in {}.report.txt)",
                            path.with_file_name(&r.sealed).display(),
                            r.note,
                            r.sealed
                        );
                    }
                    Ok(exit::OK)
                }
                Err(e) => {
                    eprintln!("audit log TAMPERED: {e}");
                    if default {
                        eprintln!(
                            "`agent audit rotate` seals this log aside with this report and starts a new chain \
                             that records the break. While appends to it fail, every permission is refused \
                             (see docs/permissions.md, \"The audit log\")."
                        );
                    }
                    Ok(exit::FAILURE)
                }
            }
        }
        AuditCommand::Rotate => {
            if !path.exists() {
                println!("no audit log yet ({}); nothing to rotate", path.display());
                return Ok(exit::OK);
            }
            let r = AuditLog::rotate(&path)?;
            match &r.problem {
                Some(e) => println!("sealed the damaged audit log: {}", e.problem),
                None => println!("sealed the audit log (it was intact)"),
            }
            println!("  sealed log:  {}", r.sealed.display());
            if let Some(head) = &r.sealed_head {
                println!("  its head:    {}", head.display());
            }
            println!("  report:      {}", r.report.display());
            println!(
                "  last good entry: seq {} (hash {})",
                r.last_good_seq, r.last_good_hash
            );
            println!(
                "new chain started in {}: its first entry records the break; `agent audit verify` checks it",
                path.display()
            );
            Ok(exit::OK)
        }
        AuditCommand::Show { last } => {
            if !path.exists() {
                println!("no audit log yet ({})", path.display());
                return Ok(exit::OK);
            }
            let entries = AuditLog::entries(&path)?;
            for e in entries.iter().skip(entries.len().saturating_sub(last)) {
                println!(
                    "{} {:>5} {:<14} {:<14} {:<28} {}",
                    e.time, e.seq, e.skill, e.capability, e.decision, e.target
                );
            }
            Ok(exit::OK)
        }
    }
}
