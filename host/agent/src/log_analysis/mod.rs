//! Log analysis, shared by `agent logs` and `agent run --mode log-analysis`:
//! the inputs read and mined (`agent-logs`), the templates printed without a
//! model ([`templates`]), or the overview sent to a session whose model
//! reports through `report_incident` ([`analyse`], in `model.rs`).

mod model;
mod print;

use std::io::{BufReader, IsTerminal};
use std::path::PathBuf;

use agent_logs::{Analysis, Assignment, Miner, MinerConfig};
use anyhow::Result;

use crate::cli::{HeadlessModelArgs, UsageError, exit};

pub(crate) use model::analyse;

/// The output asked for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Output {
    Text,
    Json,
    Markdown,
    Jsonl,
}

/// One log analysis, from its flags.
#[derive(Debug)]
pub(crate) struct Job {
    pub files: Vec<PathBuf>,
    pub prompt: Option<String>,
    pub output: Output,
    pub since: Option<String>,
    pub until: Option<String>,
    pub budget: Option<usize>,
    pub model: HeadlessModelArgs,
}

/// Where the logs come from.
enum Source {
    Stdin,
    File(PathBuf),
}

impl Source {
    fn name(&self) -> String {
        match self {
            Source::Stdin => "stdin".into(),
            Source::File(p) => p.display().to_string(),
        }
    }
}

fn sources(job: &Job) -> Result<Vec<Source>> {
    if job.files.is_empty() {
        if std::io::stdin().is_terminal() {
            return Err(UsageError(
                "no logs: give FILE... (or `-`), or pipe the logs on standard input".into(),
            )
            .into());
        }
        return Ok(vec![Source::Stdin]);
    }
    let mut out = Vec::new();
    for f in &job.files {
        if f.as_os_str() == "-" {
            if out.iter().any(|s| matches!(s, Source::Stdin)) {
                return Err(UsageError("`-` (standard input) is given twice".into()).into());
            }
            out.push(Source::Stdin);
        } else if !f.is_file() {
            return Err(UsageError(format!(
                "{}: no such log file (give a readable file, or `-` for standard input)",
                f.display()
            ))
            .into());
        } else {
            out.push(Source::File(f.clone()));
        }
    }
    Ok(out)
}

fn miner_config(job: &Job) -> Result<MinerConfig> {
    let now = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    let bound = |flag: &str, v: &Option<String>| -> Result<Option<i64>> {
        v.as_deref()
            .map(|s| agent_logs::time::parse_bound(s, now))
            .transpose()
            .map_err(|e| UsageError(format!("{flag}: {e}")).into())
    };
    let since = bound("--since", &job.since)?;
    let until = bound("--until", &job.until)?;
    if let (Some(s), Some(u)) = (since, until)
        && s > u
    {
        return Err(UsageError("--since is after --until: nothing would be read".into()).into());
    }
    Ok(MinerConfig {
        since,
        until,
        ..MinerConfig::default()
    })
}

/// Reads and mines every input, calling `sink` for each record.
fn mine(job: &Job, sources: &[Source], sink: &mut dyn FnMut(&Assignment<'_>)) -> Result<Analysis> {
    let mut miner = Miner::new(miner_config(job)?);
    for source in sources {
        let name = source.name();
        let result = match source {
            Source::Stdin => miner.mine_reader(&name, std::io::stdin().lock(), sink),
            Source::File(path) => {
                let file = std::fs::File::open(path)
                    .map_err(|e| UsageError(format!("{}: {e}", path.display())))?;
                miner.mine_reader(&name, BufReader::with_capacity(256 * 1024, file), sink)
            }
        };
        result.map_err(|e| anyhow::anyhow!("reading {name}: {e}"))?;
    }
    Ok(miner.finish())
}

/// `--templates`: the templates without a model.
pub(crate) fn templates(job: &Job) -> Result<u8> {
    print::templates(job)?;
    Ok(exit::OK)
}
