//! What the miner counts while it streams, in bounded memory: per template
//! (occurrences, first and last place and time, two sample records, its
//! busiest minute) and for the whole input (severities, error records per
//! minute), and the anomaly score that ranks templates for the model.

use std::collections::BTreeMap;

use serde::Serialize;

use crate::severity::Severity;

/// The most bytes of a sample record kept (a stack trace included).
pub const SAMPLE_CAP: usize = 2048;

/// The most distinct minutes counted for the error histogram.
pub const MAX_MINUTES: usize = 100_000;

/// Where a record is: the input's index and the 1-based line of its first
/// line.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Default)]
pub struct Place {
    pub input: usize,
    pub line: u64,
}

/// A record kept as an example of its template.
#[derive(Debug, Clone, Serialize)]
pub struct Sample {
    pub place: Place,
    /// The lines it spans.
    pub lines: u64,
    pub text: String,
}

/// The counts of one template.
#[derive(Debug, Clone, Serialize)]
pub struct TemplateStats {
    pub count: u64,
    /// The ordinal of the first record that had it (0-based, over all inputs).
    pub first_record: u64,
    pub first: Sample,
    pub last: Option<Sample>,
    pub first_time: Option<i64>,
    pub last_time: Option<i64>,
    cur_minute: Option<i64>,
    cur_count: u32,
    /// The busiest minute (Unix minutes) and its records.
    pub peak: Option<(i64, u32)>,
    /// Distinct minutes with a record (consecutive runs counted once each).
    pub minutes: u32,
}

impl TemplateStats {
    pub fn new(record: u64, sample: Sample, time: Option<i64>) -> Self {
        let mut s = TemplateStats {
            count: 0,
            first_record: record,
            first: sample,
            last: None,
            first_time: time,
            last_time: None,
            cur_minute: None,
            cur_count: 0,
            peak: None,
            minutes: 0,
        };
        s.count_time(time);
        s.count = 1;
        s
    }

    /// Counts another record (kept as the last sample, reusing its buffer).
    pub fn add(&mut self, time: Option<i64>, place: Place, lines: u64, text: &str) {
        self.count += 1;
        let last = self.last.get_or_insert_with(|| Sample {
            place,
            lines,
            text: String::new(),
        });
        last.place = place;
        last.lines = lines;
        last.text.clear();
        last.text.push_str(text);
        self.count_time(time);
    }

    fn count_time(&mut self, time: Option<i64>) {
        let Some(t) = time else { return };
        self.first_time.get_or_insert(t);
        self.last_time = Some(t);
        let minute = t.div_euclid(60);
        if self.cur_minute == Some(minute) {
            self.cur_count += 1;
        } else {
            self.cur_minute = Some(minute);
            self.cur_count = 1;
            self.minutes += 1;
        }
        if self.peak.is_none_or(|(_, c)| self.cur_count > c) {
            self.peak = Some((minute, self.cur_count));
        }
    }

    /// A burst: a minute with at least 10 records and five times the
    /// template's mean per active minute.
    pub fn burst(&self) -> Option<(i64, u32)> {
        let (minute, peak) = self.peak?;
        let mean = self.count as f64 / f64::from(self.minutes.max(1));
        (peak >= 10 && f64::from(peak) >= 5.0 * mean).then_some((minute, peak))
    }
}

/// Why a template ranks where it does.
#[derive(Debug, Clone, PartialEq, Serialize)]
pub struct Score {
    pub value: f64,
    pub signals: Vec<String>,
}

/// The anomaly score of a template among `records` records: severity
/// (fatal 8, error 5, warn 2), rarity (at most 3 records: 2; under one in
/// a thousand: 1), first seen in the second half of the input (1.5), a
/// burst (2).
pub fn score(severity: Severity, s: &TemplateStats, records: u64) -> Score {
    let mut value = 0.0;
    let mut signals = Vec::new();
    match severity {
        Severity::Fatal => {
            value += 8.0;
            signals.push("fatal".to_string());
        }
        Severity::Error => {
            value += 5.0;
            signals.push("error".to_string());
        }
        Severity::Warn => {
            value += 2.0;
            signals.push("warn".to_string());
        }
        _ => {}
    }
    if s.count <= 3 {
        value += 2.0;
        signals.push(format!("rare ({}×)", s.count));
    } else if (s.count as f64) < records as f64 / 1000.0 {
        value += 1.0;
        signals.push("rare (<0.1%)".to_string());
    }
    if records >= 100 && s.first_record * 2 > records {
        value += 1.5;
        signals.push(format!(
            "first seen late (record {} of {records})",
            s.first_record + 1
        ));
    }
    if let Some((minute, peak)) = s.burst() {
        value += 2.0;
        let at = crate::time::format_utc(minute * 60);
        signals.push(format!("burst: {peak}/min at {}", &at[..16]));
    }
    Score { value, signals }
}

/// Whole-input counts.
#[derive(Debug, Clone, Default, Serialize)]
pub struct Totals {
    pub lines: u64,
    pub bytes: u64,
    pub records: u64,
    /// Lines joined to the record before them (stack traces).
    pub joined_lines: u64,
    /// Records outside `--since`/`--until`.
    pub filtered: u64,
    /// Records left without a template (the template limit was reached).
    pub unclassified: u64,
    /// Lines cut at the line-length limit.
    pub cut_lines: u64,
    pub severities: BTreeMap<Severity, u64>,
    pub first_time: Option<i64>,
    pub last_time: Option<i64>,
    /// Error and fatal records per minute (Unix minutes).
    pub error_minutes: BTreeMap<i64, u32>,
}

impl Totals {
    pub fn count(&mut self, severity: Severity, time: Option<i64>) {
        self.records += 1;
        *self.severities.entry(severity).or_default() += 1;
        if let Some(t) = time {
            self.first_time = Some(self.first_time.map_or(t, |f| f.min(t)));
            self.last_time = Some(self.last_time.map_or(t, |l| l.max(t)));
            if severity.is_error() {
                let minute = t.div_euclid(60);
                let room = self.error_minutes.len() < MAX_MINUTES;
                if let Some(c) = self.error_minutes.get_mut(&minute) {
                    *c += 1;
                } else if room {
                    self.error_minutes.insert(minute, 1);
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample(line: u64) -> Sample {
        Sample {
            place: Place { input: 0, line },
            lines: 1,
            text: String::new(),
        }
    }

    #[test]
    fn a_burst_is_a_busy_minute_against_the_mean() {
        let mut s = TemplateStats::new(0, sample(1), Some(0));
        for m in 1..20 {
            s.add(Some(m * 60), sample(2).place, 1, "");
        }
        for _ in 0..30 {
            s.add(Some(25 * 60 + 5), sample(3).place, 1, "");
        }
        assert_eq!(s.burst(), Some((25, 30)));
        let sc = score(Severity::Error, &s, 1000);
        assert_eq!(sc.value, 7.0);
        assert_eq!(
            sc.signals,
            vec![
                "error".to_string(),
                "burst: 30/min at 1970-01-01T00:25".into()
            ]
        );
        let steady = TemplateStats::new(0, sample(1), Some(0));
        assert_eq!(steady.burst(), None);
    }

    #[test]
    fn rare_and_late_templates_score() {
        let s = TemplateStats::new(900, sample(901), None);
        let sc = score(Severity::Info, &s, 1000);
        assert_eq!(sc.value, 3.5);
    }
}
