//! The labelled security corpus (tests/fixtures/security/corpus; layout,
//! manifest schema and numbers in docs/security.md, "Measured accuracy"):
//! the real binary audits a copy of it, every case is scored, and the test
//! prints TPR, FPR and Youden's J (TPR − FPR) per category and language and
//! fails when a number falls below the floor in [`FLOORS`].
//!
//! Scoring: a finding belongs to a case when it is in the case's file and its
//! `cwe` is one of the CWEs the manifest lists for the case's category. A
//! vulnerable case is found (TP) when such a finding exists, a safe case is a
//! false positive (FP) when one exists. Findings of other categories in a
//! file, and findings in files outside the manifest, do not count.
//! tests/security-corpus-score.py applies the same rules to any report.

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

use agent_tests::{text, workspace};
use serde_json::Value;

use super::code;

/// The floor: the engine with the taint engine (issue 16) measured on this
/// corpus, each figure moved 0.001 in the lenient direction (never below
/// the rows before the taint engine). A row names a category (all languages), the
/// mean over categories, or a language's macro average over its categories; columns: scope, min TPR,
/// max FPR, min J. Raise a row when the engine gets better; never lower one
/// to make a change pass.
const FLOORS: &[Floor] = &[
    floor("sqli", 0.999, 0.001, 0.999),
    floor("xss", 0.772, 0.0, 0.772),
    floor("path-traversal", 0.841, 0.212, 0.631),
    floor("command-injection", 0.841, 0.112, 0.73),
    floor("code-injection", 0.823, 0.001, 0.823),
    floor("deserialization", 0.788, 0.2, 0.588),
    floor("ssrf", 0.881, 0.001, 0.881),
    floor("open-redirect", 0.61, 0.0, 0.61),
    floor("ldap", 0.749, 0.0, 0.749),
    floor("xpath", 0.817, 0.0, 0.817),
    floor("weak-hash", 0.61, 0.0, 0.61),
    floor("weak-cipher", 0.937, 0.0, 0.937),
    floor("weak-random", 0.399, 0.0, 0.399),
    floor("insecure-cookie", 0.311, 0.0, 0.311),
    floor("trust-boundary", 0.732, 0.0, 0.732),
    floor("mean over categories", 0.741, 0.036, 0.706),
    floor("java (macro)", 0.752, 0.078, 0.676),
    floor("python (macro)", 0.687, 0.014, 0.673),
    floor("javascript (macro)", 0.599, 0.057, 0.543),
    floor("go (macro)", 0.596, 0.043, 0.555),
    floor("ruby (macro)", 0.544, 0.001, 0.544),
    floor("php (macro)", 0.999, 0.0, 0.999),
];

/// Categories every language must cover (the minimum): Java all of
/// them, Python these.
const PYTHON_CATEGORIES: &[&str] = &[
    "sqli",
    "xss",
    "path-traversal",
    "command-injection",
    "code-injection",
    "deserialization",
    "ssrf",
    "open-redirect",
    "weak-hash",
    "weak-cipher",
    "weak-random",
    "xpath",
    "ldap",
];

const LANGUAGES: &[(&str, &[&str])] = &[
    ("java", &["java"]),
    ("python", &["py"]),
    ("javascript", &["js", "ts"]),
    ("typescript", &["ts"]),
    ("go", &["go"]),
    ("ruby", &["rb"]),
    ("php", &["php"]),
];

/// Cases per category, at least.
const MIN_CASES: usize = 20;

pub(super) struct Floor {
    scope: &'static str,
    min_tpr: f64,
    max_fpr: f64,
    min_youden: f64,
}

pub(super) const fn floor(
    scope: &'static str,
    min_tpr: f64,
    max_fpr: f64,
    min_youden: f64,
) -> Floor {
    Floor {
        scope,
        min_tpr,
        max_fpr,
        min_youden,
    }
}

fn corpus_dir() -> PathBuf {
    workspace().join("tests/fixtures/security/corpus")
}

pub(super) struct Case {
    pub(super) file: String,
    pub(super) language: String,
    pub(super) category: String,
    pub(super) vulnerable: bool,
    pub(super) sink_line: Option<u64>,
    pub(super) note: String,
}

pub(super) struct Manifest {
    /// Category → the CWEs that count for it, in report order.
    pub(super) categories: Vec<(String, Vec<String>)>,
    pub(super) cases: Vec<Case>,
}

fn field<'a>(v: &'a Value, name: &str, at: &str) -> &'a str {
    v[name]
        .as_str()
        .unwrap_or_else(|| panic!("manifest.json: {at}: `{name}` is missing or not a string"))
}

fn manifest() -> Manifest {
    let path = corpus_dir().join("manifest.json");
    let raw = std::fs::read_to_string(&path).expect("reading the corpus manifest");
    let v: Value = serde_json::from_str(&raw).expect("manifest.json is JSON");
    let categories = v["categories"]
        .as_object()
        .expect("manifest.json: `categories` is an object")
        .iter()
        .map(|(k, cwes)| {
            let cwes = cwes
                .as_array()
                .unwrap_or_else(|| panic!("manifest.json: categories.{k} is not a list"))
                .iter()
                .map(|c| c.as_str().expect("a CWE is a string").to_string())
                .collect();
            (k.clone(), cwes)
        })
        .collect();
    let cases = v["cases"]
        .as_array()
        .expect("manifest.json: `cases` is a list")
        .iter()
        .enumerate()
        .map(|(i, c)| {
            let at = format!("cases[{i}]");
            let expected = field(c, "expected", &at);
            assert!(
                expected == "vulnerable" || expected == "safe",
                "manifest.json: {at}: expected is {expected:?}, not vulnerable or safe"
            );
            Case {
                file: field(c, "file", &at).to_string(),
                language: field(c, "language", &at).to_string(),
                category: field(c, "category", &at).to_string(),
                vulnerable: expected == "vulnerable",
                sink_line: c["sink_line"].as_u64(),
                note: field(c, "note", &at).to_string(),
            }
        })
        .collect();
    Manifest { categories, cases }
}

fn files_under(dir: &Path, root: &Path, out: &mut BTreeSet<String>) {
    for entry in std::fs::read_dir(dir).expect("read_dir").flatten() {
        let p = entry.path();
        if p.is_dir() {
            files_under(&p, root, out);
        } else {
            let rel = p.strip_prefix(root).expect("under root");
            out.insert(rel.to_string_lossy().replace('\\', "/"));
        }
    }
}

#[test]
fn the_corpus_manifest_and_its_files_agree() {
    let root = corpus_dir();
    let m = manifest();
    let mut on_disk = BTreeSet::new();
    files_under(&root, &root, &mut on_disk);
    on_disk.remove("manifest.json");

    let listed: BTreeSet<String> = m.cases.iter().map(|c| c.file.clone()).collect();
    assert_eq!(listed.len(), m.cases.len(), "a file is listed twice");
    let unlisted: Vec<_> = on_disk.difference(&listed).collect();
    assert!(
        unlisted.is_empty(),
        "files not in manifest.json: {unlisted:?}"
    );
    let missing: Vec<_> = listed.difference(&on_disk).collect();
    assert!(
        missing.is_empty(),
        "manifest.json lists missing files: {missing:?}"
    );

    for (name, cwes) in &m.categories {
        assert!(!cwes.is_empty(), "category {name} maps to no CWE");
        for c in cwes {
            let digits = c.strip_prefix("CWE-").unwrap_or("");
            assert!(
                !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()),
                "category {name}: {c:?} is not a CWE id"
            );
        }
    }
    let category_names: BTreeSet<&str> = m.categories.iter().map(|(k, _)| k.as_str()).collect();
    assert_eq!(category_names.len(), 15, "the 15 categories of the issue");

    for c in &m.cases {
        let (lang, exts) = LANGUAGES
            .iter()
            .find(|(l, _)| *l == c.language)
            .unwrap_or_else(|| panic!("{}: unknown language {}", c.file, c.language));
        let ext = c.file.rsplit('.').next().unwrap_or("");
        assert!(exts.contains(&ext), "{}: not a {lang} file", c.file);
        assert!(
            c.file
                .starts_with(&format!("{}/{}/", c.language, c.category)),
            "{}: expected under {}/{}/",
            c.file,
            c.language,
            c.category
        );
        assert!(
            category_names.contains(c.category.as_str()),
            "{}: unknown category {}",
            c.file,
            c.category
        );
        assert!(!c.note.trim().is_empty(), "{}: empty note", c.file);
        let lines = std::fs::read_to_string(root.join(&c.file))
            .expect("reading a case")
            .lines()
            .count() as u64;
        match c.sink_line {
            Some(n) => assert!(
                (1..=lines).contains(&n),
                "{}: sink_line {n} is outside its {lines} lines",
                c.file
            ),
            None => assert!(
                !c.vulnerable,
                "{}: a vulnerable case needs sink_line",
                c.file
            ),
        }
    }

    for name in &category_names {
        let of: Vec<&Case> = m.cases.iter().filter(|c| c.category == *name).collect();
        assert!(
            of.len() >= MIN_CASES,
            "{name}: {} cases, at least {MIN_CASES} wanted",
            of.len()
        );
        assert!(
            of.iter().any(|c| c.vulnerable),
            "{name}: no vulnerable case"
        );
        assert!(of.iter().any(|c| !c.vulnerable), "{name}: no safe case");
        let mut langs = vec!["java"];
        if PYTHON_CATEGORIES.contains(name) {
            langs.push("python");
        }
        for lang in langs {
            for vulnerable in [true, false] {
                assert!(
                    of.iter()
                        .any(|c| c.language == lang && c.vulnerable == vulnerable),
                    "{name}: {lang} has no {} case",
                    if vulnerable { "vulnerable" } else { "safe" }
                );
            }
        }
    }
}

/// TP, FN, FP, TN.
#[derive(Default, Clone, Copy)]
struct Counts {
    tp: u32,
    fn_: u32,
    fp: u32,
    tn: u32,
}

impl Counts {
    fn tpr(self) -> f64 {
        ratio(self.tp, self.tp + self.fn_)
    }
    fn fpr(self) -> f64 {
        ratio(self.fp, self.fp + self.tn)
    }
    fn add(&mut self, o: Counts) {
        self.tp += o.tp;
        self.fn_ += o.fn_;
        self.fp += o.fp;
        self.tn += o.tn;
    }
}

fn ratio(a: u32, b: u32) -> f64 {
    if b == 0 {
        0.0
    } else {
        f64::from(a) / f64::from(b)
    }
}

/// (TPR, FPR, J) of one scope.
type Rates = (f64, f64, f64);

/// The scored table: per (language, category), per category, per language
/// (macro average of its categories' rates).
pub(super) struct Scores {
    cells: BTreeMap<(String, String), Counts>,
    by_category: Vec<(String, Counts)>,
    macro_by_language: Vec<(String, Rates)>,
}

/// A report's findings by file: (CWE, start line, end line).
pub(super) type Found = BTreeMap<String, Vec<(String, u64, u64)>>;

/// Where a vulnerable case's finding must be to count.
#[derive(Clone, Copy)]
pub(super) enum Hit {
    /// Anywhere in the case's file (this corpus).
    InFile,
    /// On the case's sink line (the development corpus's rule).
    OnSinkLine,
}

pub(super) fn score(m: &Manifest, found: &Found, rule: Hit) -> Scores {
    let cwes: BTreeMap<&str, &Vec<String>> =
        m.categories.iter().map(|(k, v)| (k.as_str(), v)).collect();
    let mut cells: BTreeMap<(String, String), Counts> = BTreeMap::new();
    let none = Vec::new();
    for c in &m.cases {
        let wanted = cwes[c.category.as_str()];
        let mut hits = found
            .get(&c.file)
            .unwrap_or(&none)
            .iter()
            .filter(|(cwe, _, _)| wanted.contains(cwe));
        let hit = match (rule, c.vulnerable, c.sink_line) {
            (Hit::OnSinkLine, true, Some(line)) => {
                hits.any(|(_, start, end)| (*start..=(*end).max(*start)).contains(&line))
            }
            _ => hits.next().is_some(),
        };
        let cell = cells
            .entry((c.language.clone(), c.category.clone()))
            .or_default();
        match (c.vulnerable, hit) {
            (true, true) => cell.tp += 1,
            (true, false) => cell.fn_ += 1,
            (false, true) => cell.fp += 1,
            (false, false) => cell.tn += 1,
        }
    }
    let by_category = m
        .categories
        .iter()
        .map(|(cat, _)| {
            let mut sum = Counts::default();
            for ((_, c), n) in &cells {
                if c == cat {
                    sum.add(*n);
                }
            }
            (cat.clone(), sum)
        })
        .collect();
    let macro_by_language = LANGUAGES
        .iter()
        .filter_map(|(lang, _)| {
            let rows: Vec<Counts> = cells
                .iter()
                .filter(|((l, _), _)| l == lang)
                .map(|(_, n)| *n)
                .collect();
            if rows.is_empty() {
                return None;
            }
            let k = rows.len() as f64;
            let tpr = rows.iter().map(|c| c.tpr()).sum::<f64>() / k;
            let fpr = rows.iter().map(|c| c.fpr()).sum::<f64>() / k;
            Some(((*lang).to_string(), (tpr, fpr, tpr - fpr)))
        })
        .collect();
    Scores {
        cells,
        by_category,
        macro_by_language,
    }
}

pub(super) fn render(s: &Scores) -> String {
    let mut out = String::new();
    let head = format!(
        "{:<11} {:<18} {:>4} {:>4} {:>3} {:>3} {:>6} {:>6} {:>6}\n",
        "language", "category", "vuln", "safe", "TP", "FP", "TPR", "FPR", "J"
    );
    out.push_str(&head);
    let row = |lang: &str, cat: &str, n: Counts| {
        format!(
            "{lang:<11} {cat:<18} {:>4} {:>4} {:>3} {:>3} {:>6.3} {:>6.3} {:>6.3}\n",
            n.tp + n.fn_,
            n.fp + n.tn,
            n.tp,
            n.fp,
            n.tpr(),
            n.fpr(),
            n.tpr() - n.fpr()
        )
    };
    for (lang, (tpr, fpr, j)) in &s.macro_by_language {
        for ((l, cat), n) in &s.cells {
            if l == lang {
                out.push_str(&row(lang, cat, *n));
            }
        }
        out.push_str(&format!(
            "{lang:<11} {:<18} {:>4} {:>4} {:>3} {:>3} {tpr:>6.3} {fpr:>6.3} {j:>6.3}\n",
            "(macro average)", "", "", "", ""
        ));
    }
    out.push('\n');
    out.push_str(&head);
    for (cat, n) in &s.by_category {
        out.push_str(&row("all", cat, *n));
    }
    let (tpr, fpr, j) = mean_over_categories(s);
    out.push_str(&format!(
        "{:<30} {:>4} {:>4} {:>3} {:>3} {tpr:>6.3} {fpr:>6.3} {j:>6.3}\n",
        MEAN, "", "", "", ""
    ));
    out
}

/// The scope name of the mean over categories.
const MEAN: &str = "mean over categories";

fn mean_over_categories(s: &Scores) -> Rates {
    let k = s.by_category.len().max(1) as f64;
    let tpr = s.by_category.iter().map(|(_, n)| n.tpr()).sum::<f64>() / k;
    let fpr = s.by_category.iter().map(|(_, n)| n.fpr()).sum::<f64>() / k;
    (tpr, fpr, tpr - fpr)
}

/// Every floor a score falls under, as one line each.
pub(super) fn below_floors(s: &Scores, floors: &[Floor]) -> Vec<String> {
    let mut rates: BTreeMap<String, Rates> = BTreeMap::new();
    for (cat, n) in &s.by_category {
        rates.insert(cat.clone(), (n.tpr(), n.fpr(), n.tpr() - n.fpr()));
    }
    for (lang, r) in &s.macro_by_language {
        rates.insert(format!("{lang} (macro)"), *r);
    }
    rates.insert(MEAN.to_string(), mean_over_categories(s));
    // Floors are rounded to three decimals in the lenient direction (TPR and
    // J down, FPR up); EPS only absorbs floating-point noise.
    const EPS: f64 = 1e-9;
    let mut failures = Vec::new();
    for f in floors {
        let Some(&(tpr, fpr, j)) = rates.get(f.scope) else {
            failures.push(format!("{}: no such category or language", f.scope));
            continue;
        };
        if tpr + EPS < f.min_tpr {
            failures.push(format!("{}: TPR {tpr:.3} < floor {}", f.scope, f.min_tpr));
        }
        if fpr > f.max_fpr + EPS {
            failures.push(format!("{}: FPR {fpr:.3} > ceiling {}", f.scope, f.max_fpr));
        }
        if j + EPS < f.min_youden {
            failures.push(format!("{}: J {j:.3} < floor {}", f.scope, f.min_youden));
        }
    }
    failures
}

/// Runs the real binary's audit on `root` and returns its findings by file
/// (relative to `root`).
pub(super) fn audit(root: &Path) -> Found {
    let dir = root.display().to_string();
    let sb = super::security::sandbox();
    let out = sb.agent(&[
        "security-audit",
        &dir,
        "--output",
        "json",
        "--fail-on",
        "none",
    ]);
    let (stdout, stderr) = text(&out);
    assert_eq!(code(&out), 0, "the audit of the corpus failed: {stderr}");
    let report: Value = serde_json::from_str(&stdout).expect("the JSON report");
    assert_eq!(
        report["truncated"]["findings"].as_u64(),
        Some(0),
        "no finding may be dropped by the caps"
    );
    let prefix = format!("{dir}/");
    let mut found = Found::new();
    for f in report["findings"].as_array().expect("findings") {
        let (Some(file), Some(cwe)) = (f["location"]["file"].as_str(), f["cwe"].as_str()) else {
            continue;
        };
        let file = file.strip_prefix(&prefix).unwrap_or(file).to_string();
        let start = f["location"]["start_line"].as_u64().unwrap_or(0);
        let end = f["location"]["end_line"].as_u64().unwrap_or(start);
        found
            .entry(file)
            .or_default()
            .push((cwe.to_string(), start, end));
    }
    found
}

#[test]
fn the_engine_meets_the_accuracy_floor_on_the_labelled_corpus() {
    let m = manifest();
    let tmp = tempfile::tempdir().expect("tmp");
    let root = tmp.path().join("corpus");
    agent_tests::copy_tree(&corpus_dir(), &root);

    let scores = score(&m, &audit(&root), Hit::InFile);
    let table = render(&scores);
    println!("security corpus ({} cases):\n{table}", m.cases.len());
    let failures = below_floors(&scores, FLOORS);
    assert!(
        failures.is_empty(),
        "accuracy on the labelled corpus fell below the floor (tests/cli/security_corpus.rs, FLOORS):\n  {}\n\n{table}",
        failures.join("\n  ")
    );
}
