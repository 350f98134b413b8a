//! The work the budget of model calls is spent on: the ranked files packed
//! into batches (whole files with line numbers, highest risk first, within
//! a budget of characters), and each batch asked the three analyses in
//! turn. Work goes in order — the first batch's three analyses, then the
//! second batch's — so when the budget runs out, what is left unanalysed is
//! the lowest risk.

use serde::Serialize;

use crate::risk::FileRisk;

/// One batch of files: one prompt's worth.
#[derive(Debug, Clone, PartialEq, Eq, Serialize)]
pub struct Batch {
    /// The files, highest risk first.
    pub files: Vec<String>,
    /// The files' text with line numbers, each under a `### path` header.
    #[serde(skip)]
    pub text: String,
}

/// One model conversation: a batch and an analysis (index into
/// [`crate::ANALYSES`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Item {
    /// The batch.
    pub batch: usize,
    /// The analysis.
    pub analysis: usize,
}

/// A file's text numbered line by line, cut at `max_chars` (the cut said).
pub fn numbered(file: &str, text: &str, max_chars: usize) -> String {
    let mut out = format!("### {file}\n");
    for (i, line) in text.lines().enumerate() {
        let next = format!("{:>5} | {line}\n", i + 1);
        if out.len() + next.len() > max_chars {
            out.push_str(&format!(
                "… (cut at line {}; read the rest with read_file)\n",
                i
            ));
            break;
        }
        out.push_str(&next);
    }
    out
}

/// Packs the ranked files into batches of at most `budget_chars` each (a
/// file larger than the budget is cut and gets a batch of its own), at
/// most `max_files` files in all. `text` reads a file.
pub fn batches(
    ranked: &[FileRisk],
    text: &dyn Fn(&str) -> Option<String>,
    budget_chars: usize,
    max_files: usize,
) -> Vec<Batch> {
    let mut out: Vec<Batch> = Vec::new();
    let mut current = Batch {
        files: Vec::new(),
        text: String::new(),
    };
    for risk in ranked.iter().take(max_files) {
        let Some(t) = text(&risk.file) else { continue };
        let block = numbered(&risk.file, &t, budget_chars);
        if !current.files.is_empty() && current.text.len() + block.len() > budget_chars {
            out.push(std::mem::replace(
                &mut current,
                Batch {
                    files: Vec::new(),
                    text: String::new(),
                },
            ));
        }
        current.files.push(risk.file.clone());
        current.text.push_str(&block);
        current.text.push('\n');
    }
    if !current.files.is_empty() {
        out.push(current);
    }
    out
}

/// Every batch's analyses, in order.
pub fn items(batches: usize) -> Vec<Item> {
    (0..batches)
        .flat_map(|batch| (0..crate::ANALYSES.len()).map(move |analysis| Item { batch, analysis }))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn risk(file: &str) -> FileRisk {
        FileRisk {
            file: file.into(),
            score: 1,
            reasons: Vec::new(),
        }
    }

    #[test]
    fn files_are_packed_in_rank_order_within_the_budget() {
        let ranked = [risk("a.py"), risk("b.py"), risk("c.py"), risk("gone.py")];
        let text = |p: &str| (p != "gone.py").then(|| "x = 1\n".repeat(5));
        let b = batches(&ranked, &text, 120, 10);
        let files: Vec<Vec<String>> = b.iter().map(|b| b.files.clone()).collect();
        assert_eq!(
            files,
            [
                vec!["a.py".to_string()],
                vec!["b.py".into()],
                vec!["c.py".into()]
            ]
        );
        assert!(
            b[0].text.starts_with("### a.py\n    1 | x = 1\n"),
            "{}",
            b[0].text
        );
        let b = batches(&ranked, &text, 10_000, 2);
        assert_eq!(b.len(), 1);
        assert_eq!(b[0].files, ["a.py", "b.py"]);
    }

    #[test]
    fn a_long_file_is_cut_and_says_so() {
        let t = "line\n".repeat(100);
        let n = numbered("f", &t, 60);
        assert!(
            n.ends_with("… (cut at line 4; read the rest with read_file)\n"),
            "{n}"
        );
    }

    #[test]
    fn each_batch_gets_the_three_analyses_before_the_next() {
        let i = items(2);
        assert_eq!(i.len(), 6);
        assert_eq!(
            i[2],
            Item {
                batch: 0,
                analysis: 2
            }
        );
        assert_eq!(
            i[3],
            Item {
                batch: 1,
                analysis: 0
            }
        );
    }
}
