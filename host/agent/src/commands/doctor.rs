//! `agent doctor`: checks the state `agent` keeps on disk and recovers a damaged database.

use std::path::Path;

use agent_policy::AuditLog;
use agent_store::{ScanReport, Store};
use anyhow::Result;

use crate::app::App;
use crate::cli::{DoctorArgs, exit};

pub fn run(app: &mut App, args: DoctorArgs) -> Result<u8> {
    let mut sound = true;
    let db = app.paths.db_path();
    if !db.exists() {
        println!("database {}: none yet", db.display());
    } else {
        let scan = Store::scan_file(&db)?;
        if scan.is_healthy() {
            println!("database {}: ok ({})", db.display(), counts(&scan));
        } else if args.repair {
            let recovery = Store::recover(&db)?;
            println!(
                "database {}: was damaged; set aside as {}",
                db.display(),
                recovery.damaged.display()
            );
            println!(
                "  recovered into a new database: {}",
                counts(&recovery.scan)
            );
            for t in recovery.scan.tables.iter().filter(|t| t.damage.is_some()) {
                println!(
                    "  lost: the part of `{}` beyond the damage ({})",
                    t.table,
                    t.damage.as_deref().unwrap_or_default()
                );
            }
        } else {
            sound = false;
            println!("database {}: DAMAGED", db.display());
            describe_damage(&scan);
            println!(
                "  run `agent doctor --repair` to set it aside and recreate it with what can still be read ({})",
                counts(&scan)
            );
        }
    }
    sound &= check_audit(&app.paths.audit_log_path());
    for (what, dir) in [
        ("component cache", app.paths.component_cache_dir()),
        ("registry cache", app.paths.registry_cache_dir()),
    ] {
        sound &= check_dir(what, &dir);
    }
    Ok(if sound { exit::OK } else { exit::FAILURE })
}

/// `80 grants, 60 sessions, ...`: the records read, table by table.
fn counts(scan: &ScanReport) -> String {
    scan.tables
        .iter()
        .map(|t| format!("{} {}", t.records, t.table))
        .collect::<Vec<_>>()
        .join(", ")
}

fn describe_damage(scan: &ScanReport) {
    if let Some(e) = &scan.open_error {
        println!("  does not open: {e}");
    }
    for t in &scan.tables {
        if let Some(d) = &t.damage {
            println!(
                "  table `{}`: {} records readable, then: {d}",
                t.table, t.records
            );
        }
    }
}

fn check_audit(path: &Path) -> bool {
    if !path.exists() {
        println!("audit log {}: none yet", path.display());
        return true;
    }
    match AuditLog::verify(path) {
        Ok(report) => {
            println!(
                "audit log {}: {} entries, hash chain intact",
                path.display(),
                report.entries
            );
            true
        }
        Err(e) => {
            println!(
                "audit log {}: BROKEN: {e}\n  the way back: `agent audit rotate` seals it aside \
                 with its verification report and starts a new chain that records the break",
                path.display()
            );
            false
        }
    }
}

/// A cache directory: missing is fine (created on first use); present must be a readable
/// directory.
fn check_dir(what: &str, dir: &Path) -> bool {
    if !dir.exists() {
        println!("{what} {}: none yet", dir.display());
        return true;
    }
    match std::fs::read_dir(dir) {
        Ok(entries) => {
            let (mut files, mut bytes) = (0u64, 0u64);
            for entry in entries.flatten() {
                if let Ok(meta) = entry.metadata() {
                    files += 1;
                    bytes += meta.len();
                }
            }
            let read_only = std::fs::metadata(dir).is_ok_and(|m| m.permissions().readonly());
            if read_only {
                println!("{what} {}: READ-ONLY ({files} entries)", dir.display());
                return false;
            }
            println!(
                "{what} {}: ok ({files} entries, {bytes} bytes)",
                dir.display()
            );
            true
        }
        Err(e) => {
            println!("{what} {}: UNREADABLE: {e}", dir.display());
            false
        }
    }
}
