//! The streaming miner: lines in, records out (a stack trace joined to its
//! first line), each given a template by the parse tree and counted, in
//! memory bounded by the template limit whatever the input's size.

use std::io::BufRead;

use serde::Serialize;

use crate::drain::{Drain, DrainConfig, Template};
use crate::reader::LineReader;
use crate::record::{self, Content, Continuation};
use crate::severity::Severity;
use crate::signals::{Place, SAMPLE_CAP, Sample, TemplateStats, Totals};
use crate::token::{Tok, tokenize};

/// The most lines joined into one record.
pub const MAX_JOINED: u64 = 500;

/// The bytes of a sample's first line kept.
const FIRST_LINE_CAP: usize = 600;

/// How the miner works.
#[derive(Debug, Clone, Copy)]
pub struct MinerConfig {
    pub drain: DrainConfig,
    /// The year assumed by stamps without one (syslog).
    pub year: i64,
    /// Records before this (Unix seconds) are skipped.
    pub since: Option<i64>,
    /// Records after this are skipped.
    pub until: Option<i64>,
}

impl Default for MinerConfig {
    fn default() -> Self {
        MinerConfig {
            drain: DrainConfig::default(),
            year: current_year(),
            since: None,
            until: None,
        }
    }
}

/// This year (UTC), from the system clock.
pub fn current_year() -> i64 {
    let secs = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map_or(0, |d| d.as_secs() as i64);
    crate::time::civil_from_days(secs.div_euclid(86_400)).0
}

/// One input (a file or standard input) and its lines.
#[derive(Debug, Clone, Serialize)]
pub struct Input {
    pub name: String,
    pub lines: u64,
}

/// A record and the template it was given, as the miner sees it.
#[derive(Debug)]
pub struct Assignment<'a> {
    pub place: Place,
    /// Lines the record spans (more than one for a stack trace).
    pub lines: u64,
    pub time: Option<i64>,
    pub severity: Severity,
    /// `None`: the template limit was reached and it matched none.
    pub template: Option<&'a Template>,
}

#[derive(Debug, Default)]
struct Pending {
    active: bool,
    place: Place,
    lines: u64,
    time: Option<i64>,
    severity: Severity,
    line: String,
    content: Option<Content>,
    sample: String,
    in_traceback: bool,
}

/// The miner.
#[derive(Debug)]
pub struct Miner {
    config: MinerConfig,
    drain: Drain,
    stats: Vec<TemplateStats>,
    totals: Totals,
    inputs: Vec<Input>,
    pending: Pending,
    toks: Vec<Tok<'static>>,
    last_time: Option<i64>,
}

/// What the miner found.
#[derive(Debug)]
pub struct Analysis {
    pub inputs: Vec<Input>,
    pub totals: Totals,
    pub templates: Vec<(Template, TemplateStats)>,
}

impl Miner {
    pub fn new(config: MinerConfig) -> Self {
        Miner {
            config,
            drain: Drain::new(config.drain),
            stats: Vec::new(),
            totals: Totals::default(),
            inputs: Vec::new(),
            pending: Pending::default(),
            toks: Vec::with_capacity(64),
            last_time: None,
        }
    }

    /// Starts the next input (its lines are numbered from 1).
    pub fn begin_input(&mut self, name: &str, sink: &mut dyn FnMut(&Assignment<'_>)) {
        self.flush(sink);
        self.inputs.push(Input {
            name: name.to_string(),
            lines: 0,
        });
    }

    /// Reads every line of `reader` as the input `name`.
    ///
    /// # Errors
    /// The reader's I/O error.
    pub fn mine_reader(
        &mut self,
        name: &str,
        reader: impl BufRead,
        sink: &mut dyn FnMut(&Assignment<'_>),
    ) -> std::io::Result<()> {
        self.begin_input(name, sink);
        let mut lines = LineReader::new(reader);
        while let Some(line) = lines.next_line()? {
            match std::str::from_utf8(line) {
                Ok(s) => self.push_line(s, sink),
                Err(_) => self.push_line(&String::from_utf8_lossy(line), sink),
            }
        }
        self.totals.cut_lines += lines.cut;
        self.totals.bytes += lines.bytes;
        self.flush(sink);
        Ok(())
    }

    /// One line of the current input.
    pub fn push_line(&mut self, line: &str, sink: &mut dyn FnMut(&Assignment<'_>)) {
        if self.inputs.is_empty() {
            self.begin_input("input", sink);
        }
        let input = self.inputs.len() - 1;
        self.inputs[input].lines += 1;
        self.totals.lines += 1;
        let number = self.inputs[input].lines;
        if self.pending.active && self.pending.lines < MAX_JOINED {
            let c = record::continuation(line, self.pending.in_traceback);
            if c != Continuation::No {
                let p = &mut self.pending;
                p.lines += 1;
                self.totals.joined_lines += 1;
                match c {
                    Continuation::TracebackStart => p.in_traceback = true,
                    Continuation::TracebackEnd => p.in_traceback = false,
                    _ => {}
                }
                if p.sample.len() + line.len() < SAMPLE_CAP {
                    p.sample.push('\n');
                    p.sample.push_str(line);
                }
                return;
            }
        }
        self.flush(sink);
        let h = record::header(line, self.config.year);
        let p = &mut self.pending;
        p.active = true;
        p.place = Place {
            input,
            line: number,
        };
        p.lines = 1;
        p.time = h.time.or(self.last_time);
        if h.time.is_some() {
            self.last_time = h.time;
        }
        p.severity = h.severity;
        p.line.clear();
        p.line.push_str(line);
        p.content = Some(h.content);
        p.sample.clear();
        p.sample.push_str(cut(line, FIRST_LINE_CAP));
        p.in_traceback = false;
    }

    /// Finishes the record in progress.
    pub fn flush(&mut self, sink: &mut dyn FnMut(&Assignment<'_>)) {
        if !self.pending.active {
            return;
        }
        self.pending.active = false;
        let p = &self.pending;
        if let Some(t) = p.time
            && (self.config.since.is_some_and(|s| t < s)
                || self.config.until.is_some_and(|u| t > u))
        {
            self.totals.filtered += 1;
            return;
        }
        let content: &str = match p.content.as_ref() {
            Some(Content::Range(s, e)) => &p.line[*s..*e],
            Some(Content::Built(b)) => b,
            None => "",
        };
        // Reuse the token buffer's allocation across records (an empty
        // vector collected in place keeps its capacity).
        let mut toks: Vec<Tok<'_>> = std::mem::take(&mut self.toks)
            .into_iter()
            .map(|_| Tok::Var)
            .collect();
        tokenize(content, &mut toks);
        let id = self.drain.add(p.severity, &toks);
        toks.clear();
        self.toks = toks.into_iter().map(|_| Tok::Var).collect();
        let record = self.totals.records;
        self.totals.count(p.severity, p.time);
        match id {
            Some(id) => {
                let i = id as usize - 1;
                if i == self.stats.len() {
                    self.stats.push(TemplateStats::new(
                        record,
                        Sample {
                            place: p.place,
                            lines: p.lines,
                            text: p.sample.clone(),
                        },
                        p.time,
                    ));
                } else {
                    self.stats[i].add(p.time, p.place, p.lines, &p.sample);
                }
            }
            None => self.totals.unclassified += 1,
        }
        sink(&Assignment {
            place: p.place,
            lines: p.lines,
            time: p.time,
            severity: p.severity,
            template: id.map(|id| self.drain.template(id)),
        });
    }

    /// Ends mining.
    pub fn finish(mut self) -> Analysis {
        self.flush(&mut |_| {});
        let templates = self.drain.templates().to_vec();
        Analysis {
            inputs: self.inputs,
            totals: self.totals,
            templates: templates.into_iter().zip(self.stats).collect(),
        }
    }
}

/// At most `n` bytes of `s`, cut at a character boundary.
pub fn cut(s: &str, n: usize) -> &str {
    if s.len() <= n {
        return s;
    }
    let mut end = n;
    while !s.is_char_boundary(end) {
        end -= 1;
    }
    &s[..end]
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_java_trace_is_one_record_and_lines_map_to_it() {
        let log = "\
2024-01-15T10:00:00Z INFO start worker 1
2024-01-15T10:00:01Z ERROR request failed
java.lang.IllegalStateException: boom
\tat com.x.Y.z(Y.java:10)
\tat com.x.Y.main(Y.java:3)
2024-01-15T10:00:02Z INFO start worker 2
";
        let mut miner = Miner::new(MinerConfig::default());
        let mut seen = Vec::new();
        miner
            .mine_reader("app.log", log.as_bytes(), &mut |a| {
                seen.push((a.place.line, a.lines, a.template.map(|t| t.id)));
            })
            .expect("read");
        assert_eq!(
            seen,
            vec![(1, 1, Some(1)), (2, 4, Some(2)), (6, 1, Some(1))]
        );
        let a = miner.finish();
        assert_eq!(a.totals.lines, 6);
        assert_eq!(a.totals.records, 3);
        assert_eq!(a.totals.joined_lines, 3);
        assert_eq!(a.templates[0].0.text(), "INFO start worker <*>");
        assert!(
            a.templates[1].1.first.text.ends_with("(Y.java:3)"),
            "{}",
            a.templates[1].1.first.text
        );
    }

    #[test]
    fn since_and_until_skip_records_outside() {
        let log =
            "2024-01-15T10:00:00Z a\n2024-01-15T11:00:00Z b\n  more of b\n2024-01-15T12:00:00Z c\n";
        let mut miner = Miner::new(MinerConfig {
            since: Some(1_705_312_800 + 1800),
            until: Some(1_705_312_800 + 3 * 1800),
            ..MinerConfig::default()
        });
        let mut seen = Vec::new();
        miner
            .mine_reader("x", log.as_bytes(), &mut |a| seen.push(a.place.line))
            .expect("read");
        assert_eq!(seen, vec![2]);
        assert_eq!(miner.finish().totals.filtered, 2);
    }
}
