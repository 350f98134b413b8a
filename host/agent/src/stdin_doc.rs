//! Piped standard input attached to a `--prompt` task as a document
//! (`echo LOG | agent run -p "Find the root cause"`).

use std::io::Read;

/// The most bytes of standard input attached to a task (256 KiB).
pub(crate) const STDIN_CAP: usize = 256 * 1024;

/// How far past the cap the rest of the input is counted, for the message
/// saying how much was cut (64 MiB; beyond that it says "more than").
const COUNT_LIMIT: u64 = 64 * 1024 * 1024;

/// What was read from standard input.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct StdinDocument {
    /// The text kept (at most `cap` bytes, cut at a character boundary).
    pub text: String,
    /// Bytes kept.
    pub kept: usize,
    /// Bytes read in all, when more than `kept` (the input was cut).
    pub total: Option<Total>,
}

/// The size of an input that was cut.
#[derive(Debug, PartialEq, Eq, Clone, Copy)]
pub(crate) enum Total {
    /// Exactly this many bytes.
    Exactly(u64),
    /// More than this many bytes (counting stopped there).
    MoreThan(u64),
}

impl std::fmt::Display for Total {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Total::Exactly(n) => write!(f, "{n}"),
            Total::MoreThan(n) => write!(f, "more than {n}"),
        }
    }
}

/// Reads `input` keeping at most `cap` bytes; `None` when it holds nothing
/// but white space.
pub(crate) fn read(input: impl Read, cap: usize) -> std::io::Result<Option<StdinDocument>> {
    let mut input = input;
    let mut head = Vec::new();
    (&mut input).take(cap as u64 + 1).read_to_end(&mut head)?;
    let total = if head.len() > cap {
        let rest = std::io::copy(&mut (&mut input).take(COUNT_LIMIT), &mut std::io::sink())?;
        let read = head.len() as u64 + rest;
        head.truncate(cap);
        Some(if rest == COUNT_LIMIT {
            Total::MoreThan(read)
        } else {
            Total::Exactly(read)
        })
    } else {
        None
    };
    if total.is_some() {
        // Cut at a character boundary (a UTF-8 sequence never spans more
        // than 4 bytes, so at most 3 bytes go).
        let valid = match std::str::from_utf8(&head) {
            Ok(_) => head.len(),
            Err(e) if e.error_len().is_none() => e.valid_up_to(),
            Err(_) => head.len(),
        };
        head.truncate(valid);
    }
    let text = String::from_utf8_lossy(&head).into_owned();
    if text.trim().is_empty() {
        return Ok(None);
    }
    Ok(Some(StdinDocument {
        kept: head.len(),
        text,
        total,
    }))
}

impl StdinDocument {
    /// The document as the attachment of a turn, named `stdin` (with a
    /// last line saying so when it was cut).
    pub(crate) fn attachment(&self) -> agent_protocol::Attachment {
        let mut content = self.text.clone();
        if let Some(total) = self.total {
            if !content.ends_with('\n') {
                content.push('\n');
            }
            content.push_str(&format!(
                "[cut: the first {} of {total} bytes of standard input are above]\n",
                self.kept
            ));
        }
        agent_protocol::Attachment {
            name: "stdin".into(),
            content,
        }
    }

    /// The task followed by the document, delimited and named `stdin`: the
    /// message the model gets.
    #[cfg(test)]
    pub(crate) fn attach_to(&self, task: &str) -> String {
        agent_core::session::with_attachments(task, &[self.attachment()])
    }

    /// The warning for stderr when the input was cut.
    pub(crate) fn warning(&self) -> Option<String> {
        self.total.map(|total| {
            format!(
                "warning: standard input has {total} bytes; only the first {} (the {} KiB cap) \
                 were attached to the task",
                self.kept,
                STDIN_CAP / 1024
            )
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn small_input_is_kept_whole_and_blank_input_attaches_nothing() {
        let doc = read(&b"LOG\n"[..], 10).expect("read").expect("doc");
        assert_eq!(doc.text, "LOG\n");
        assert_eq!(doc.total, None);
        assert_eq!(
            doc.attach_to("Find it"),
            "Find it\n\n<document name=\"stdin\">\nLOG\n</document>"
        );
        assert_eq!(doc.warning(), None);
        assert_eq!(read(&b" \n\t"[..], 10).expect("read"), None);
        assert_eq!(read(&b""[..], 10).expect("read"), None);
    }

    #[test]
    fn a_large_input_is_cut_at_a_character_boundary_and_counted() {
        // "é" is two bytes: a cut at 5 bytes would split the third one.
        let doc = read("ééééé".as_bytes(), 5).expect("read").expect("doc");
        assert_eq!(doc.text, "éé");
        assert_eq!(doc.kept, 4);
        assert_eq!(doc.total, Some(Total::Exactly(10)));
        assert!(doc.attach_to("t").ends_with(
            "éé\n[cut: the first 4 of 10 bytes of standard input are above]\n</document>"
        ));
    }
}
