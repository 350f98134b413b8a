//! `agent logs --templates`: every line's template as JSON lines while
//! mining, or the templates found, ranked, as text, Markdown or JSON.

use std::io::{BufWriter, ErrorKind, Write};

use agent_logs::view::rank;
use anyhow::Result;
use serde_json::json;

use super::{Job, Output, Source, mine, sources};

pub(super) fn templates(job: &Job) -> Result<()> {
    let stdout = std::io::stdout();
    let mut out = BufWriter::with_capacity(256 * 1024, stdout.lock());
    let mut failed: Option<std::io::Error> = None;
    let sources = sources(job)?;
    let names: Vec<String> = sources.iter().map(Source::name).collect();
    let analysis = if job.output == Output::Jsonl {
        mine(job, &sources, &mut |a| {
            if failed.is_some() {
                return;
            }
            let (id, text) = match a.template {
                Some(t) => (json!(t.id), json!(t.text())),
                None => (json!(null), json!(null)),
            };
            for k in 0..a.lines {
                let line = json!({
                    "input": names[a.place.input],
                    "line": a.place.line + k,
                    "template_id": id,
                    "template": text,
                });
                if let Err(e) = writeln!(out, "{line}") {
                    failed = Some(e);
                    return;
                }
            }
        })?
    } else {
        mine(job, &sources, &mut |_| {})?
    };
    if let Some(e) = failed {
        if e.kind() == ErrorKind::BrokenPipe {
            return Ok(());
        }
        return Err(anyhow::anyhow!("writing to standard output: {e}"));
    }
    let ranked = rank(&analysis);
    let write = |out: &mut dyn Write| -> std::io::Result<()> {
        match job.output {
            Output::Jsonl => Ok(()),
            Output::Text => {
                for r in &ranked {
                    let (t, s) = &analysis.templates[r.index];
                    writeln!(
                        out,
                        "T{}\t{}\t{}\t{}",
                        t.id,
                        t.severity.name(),
                        s.count,
                        t.text()
                    )?;
                }
                Ok(())
            }
            Output::Markdown => {
                writeln!(out, "| id | severity | count | signals | template |")?;
                writeln!(out, "|---|---|---|---|---|")?;
                for r in &ranked {
                    let (t, s) = &analysis.templates[r.index];
                    writeln!(
                        out,
                        "| T{} | {} | {} | {} | `{}` |",
                        t.id,
                        t.severity.name(),
                        s.count,
                        r.score.signals.join(", "),
                        t.text().replace('|', "\\|").replace('`', "'")
                    )?;
                }
                Ok(())
            }
            Output::Json => {
                let templates: Vec<_> = ranked
                    .iter()
                    .map(|r| {
                        let (t, s) = &analysis.templates[r.index];
                        json!({
                            "id": t.id,
                            "severity": t.severity,
                            "count": s.count,
                            "template": t.text(),
                            "first": {"input": analysis.inputs[s.first.place.input].name, "line": s.first.place.line},
                            "score": r.score.value,
                            "signals": r.score.signals,
                        })
                    })
                    .collect();
                let doc = json!({
                    "inputs": analysis.inputs,
                    "totals": analysis.totals,
                    "templates": templates,
                });
                writeln!(out, "{doc}")
            }
        }
    };
    let result = write(&mut out).and_then(|()| out.flush());
    match result {
        Err(e) if e.kind() == ErrorKind::BrokenPipe => Ok(()),
        Err(e) => Err(anyhow::anyhow!("writing to standard output: {e}")),
        Ok(()) => Ok(()),
    }
}
