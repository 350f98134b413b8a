//! The compact view of an analysis that the model reads: totals, the
//! busiest error minutes, then templates ranked by anomaly score, each with
//! its counts, signals and two sample records with their line numbers —
//! cut to a budget of bytes, so a log of any size becomes one document.

use std::fmt::Write as _;

use crate::miner::{Analysis, cut};
use crate::signals::{Sample, Score, score};
use crate::time::format_utc;

/// The default budget of the view: 48 KiB (about 12,000 tokens).
pub const DEFAULT_BUDGET: usize = 48 * 1024;

/// The bytes of one sample shown.
const SAMPLE_SHOWN: usize = 700;

/// A template's rank.
#[derive(Debug, Clone)]
pub struct Ranked {
    /// Index into `Analysis::templates`.
    pub index: usize,
    pub score: Score,
}

/// Templates ranked by score (highest first; ties: more severe, then rarer,
/// then earlier).
pub fn rank(a: &Analysis) -> Vec<Ranked> {
    let mut ranked: Vec<Ranked> = a
        .templates
        .iter()
        .enumerate()
        .map(|(index, (t, s))| Ranked {
            index,
            score: score(t.severity, s, a.totals.records),
        })
        .collect();
    ranked.sort_by(|x, y| {
        let (tx, sx) = &a.templates[x.index];
        let (ty, sy) = &a.templates[y.index];
        y.score
            .value
            .total_cmp(&x.score.value)
            .then(ty.severity.cmp(&tx.severity))
            .then(sx.count.cmp(&sy.count))
            .then(x.index.cmp(&y.index))
    });
    ranked
}

fn place(a: &Analysis, s: &Sample) -> String {
    let name = a
        .inputs
        .get(s.place.input)
        .map_or("input", |i| i.name.as_str());
    if s.lines > 1 {
        format!("{name}:{}-{}", s.place.line, s.place.line + s.lines - 1)
    } else {
        format!("{name}:{}", s.place.line)
    }
}

fn sample(out: &mut String, a: &Analysis, label: &str, s: &Sample) {
    let _ = writeln!(out, "  {label} {}:", place(a, s));
    let text = cut(&s.text, SAMPLE_SHOWN);
    for line in text.lines() {
        let _ = writeln!(out, "    | {line}");
    }
    if text.len() < s.text.len() {
        let _ = writeln!(out, "    | [… {} more bytes]", s.text.len() - text.len());
    }
}

/// The view within `budget` bytes (at least the header is always shown).
pub fn render(a: &Analysis, budget: usize) -> String {
    let t = &a.totals;
    let mut out = String::new();
    let _ = writeln!(out, "# Log overview");
    for i in &a.inputs {
        let _ = writeln!(out, "input: {} ({} lines)", i.name, i.lines);
    }
    let _ = write!(
        out,
        "records: {} ({} lines joined into multi-line records such as stack traces)",
        t.records, t.joined_lines
    );
    if t.filtered > 0 {
        let _ = write!(out, "; {} outside --since/--until skipped", t.filtered);
    }
    let _ = writeln!(out, "; templates: {}", a.templates.len());
    if let (Some(f), Some(l)) = (t.first_time, t.last_time) {
        let _ = writeln!(out, "time range: {} .. {}", format_utc(f), format_utc(l));
    }
    let sev: Vec<String> = t
        .severities
        .iter()
        .rev()
        .map(|(s, n)| format!("{} {n}", s.name()))
        .collect();
    let _ = writeln!(out, "severity: {}", sev.join(", "));
    if t.unclassified > 0 {
        let _ = writeln!(
            out,
            "unclassified (template limit reached): {}",
            t.unclassified
        );
    }
    if !t.error_minutes.is_empty() {
        let mut busiest: Vec<(&i64, &u32)> = t.error_minutes.iter().collect();
        busiest.sort_by(|x, y| y.1.cmp(x.1).then(x.0.cmp(y.0)));
        let top: Vec<String> = busiest
            .iter()
            .take(5)
            .map(|(m, n)| format!("{} {n}", &format_utc(**m * 60)[..16]))
            .collect();
        let _ = writeln!(
            out,
            "busiest minutes for error/fatal records: {}",
            top.join(", ")
        );
    }
    let _ = writeln!(
        out,
        "\nEvery sample is `input:line` (the line numbers to cite as evidence).\n\n\
         ## Templates, most anomalous first"
    );
    let ranked = rank(a);
    let mut shown = 0;
    for r in &ranked {
        let (tpl, s) = &a.templates[r.index];
        let mut block = String::new();
        let _ = writeln!(
            block,
            "\n[T{}] {} ×{} score {:.1}{}{}",
            tpl.id,
            tpl.severity.name(),
            s.count,
            r.score.value,
            if r.score.signals.is_empty() {
                ""
            } else {
                " · "
            },
            r.score.signals.join(", ")
        );
        let _ = writeln!(block, "  template: {}", cut(&tpl.text(), 500));
        if let (Some(f), Some(l)) = (s.first_time, s.last_time) {
            let _ = writeln!(block, "  seen: {} .. {}", format_utc(f), format_utc(l));
        }
        sample(&mut block, a, "first", &s.first);
        if let Some(last) = &s.last {
            sample(&mut block, a, "last", last);
        }
        if out.len() + block.len() > budget {
            break;
        }
        out.push_str(&block);
        shown += 1;
    }
    // The rest, one line each, while the budget lasts.
    let rest = &ranked[shown..];
    let mut listed = 0;
    if !rest.is_empty() {
        let head = "\n## Other templates (id, severity, count, template)\n";
        if out.len() + head.len() < budget {
            out.push_str(head);
            for r in rest {
                let (tpl, s) = &a.templates[r.index];
                let line = format!(
                    "T{} {} ×{} {}\n",
                    tpl.id,
                    tpl.severity.name(),
                    s.count,
                    cut(&tpl.text(), 300)
                );
                if out.len() + line.len() + 80 > budget {
                    break;
                }
                out.push_str(&line);
                listed += 1;
            }
        }
    }
    let omitted = rest.len() - listed;
    if omitted > 0 {
        let _ = writeln!(
            out,
            "\n[{omitted} lower-ranked templates omitted to fit the budget]"
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use crate::{Miner, MinerConfig};

    fn analysis(log: &str) -> crate::Analysis {
        let mut m = Miner::new(MinerConfig::default());
        m.mine_reader("app.log", log.as_bytes(), &mut |_| {})
            .expect("read");
        m.finish()
    }

    #[test]
    fn errors_rank_first_and_the_budget_holds() {
        let mut log = String::new();
        for i in 0..300 {
            log.push_str(&format!(
                "2024-01-15T10:{:02}:00Z INFO served request {i}\n",
                i % 60
            ));
        }
        log.push_str("2024-01-15T10:59:00Z ERROR database connection lost to 10.0.0.5\n");
        for i in 0..40 {
            log.push_str(&format!(
                "2024-01-15T11:00:00Z INFO other thing{i} happened\n"
            ));
        }
        let a = analysis(&log);
        let view = super::render(&a, 100_000);
        let error = view.find("[T2] error ×1").expect("error template shown");
        let info = view.find("[T1] info ×300").expect("info template shown");
        assert!(error < info, "{view}");
        assert!(view.contains("  first app.log:301:\n    | 2024-01-15T10:59:00Z ERROR database"));
        assert!(view.contains("busiest minutes for error/fatal records: 2024-01-15T10:59 1"));
        // A smaller budget: the lowest-ranked template becomes one line.
        let small = super::render(&a, 1200);
        assert!(small.len() <= 1200, "{}", small.len());
        assert!(
            small.contains("\nT1 info ×300 INFO served request <*>\n"),
            "{small}"
        );
        // Smaller still: templates are omitted, and said so.
        let tiny = super::render(&a, 700);
        assert!(
            tiny.contains("[2 lower-ranked templates omitted to fit the budget]"),
            "{tiny}"
        );
    }
}
