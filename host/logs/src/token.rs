//! Splitting a record's content into tokens and masking the ones that are
//! variables by their shape, before the parse tree sees them: numbers and
//! anything holding a digit (IPs, UUIDs, durations, sizes, hex with digits),
//! long hex words, paths and URLs, quoted strings, and the value of every
//! `key=value` (the key stays). Tokens borrow the line: nothing is allocated.

/// One token of a record.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tok<'a> {
    /// A word kept as it is.
    Word(&'a str),
    /// A variable by its shape (shown as `<*>`).
    Var,
    /// `key=` followed by a value (the key and `=` kept; shown `key=<*>`).
    Key(&'a str),
}

/// The most tokens of a record the tree sees; the rest is one variable.
pub const MAX_TOKENS: usize = 96;

/// Splits `content` on white space (a quoted string, or a `key="..."`, is
/// one token even with spaces inside) and masks variables, into `out`.
pub fn tokenize<'a>(content: &'a str, out: &mut Vec<Tok<'a>>) {
    out.clear();
    let b = content.as_bytes();
    let mut i = 0;
    while i < b.len() {
        while i < b.len() && b[i].is_ascii_whitespace() {
            i += 1;
        }
        if i >= b.len() {
            break;
        }
        if out.len() == MAX_TOKENS - 1 {
            out.push(Tok::Var);
            return;
        }
        let start = i;
        while i < b.len() && !b[i].is_ascii_whitespace() {
            let c = b[i];
            if (c == b'"' || c == b'\'')
                && (i == start || b[i - 1] == b'=' || b[i - 1] == b'(' || b[i - 1] == b'[')
            {
                // A quoted string: to its closing quote, spaces and all.
                match b[i + 1..].iter().position(|&q| q == c) {
                    Some(p) => i += p + 2,
                    None => i = b.len(),
                }
            } else {
                i += 1;
            }
        }
        out.push(classify(&content[start..i]));
    }
}

/// The token a piece of text is.
pub fn classify(t: &str) -> Tok<'_> {
    let b = t.as_bytes();
    if let Some(eq) = b.iter().position(|&c| c == b'=')
        && eq > 0
    {
        return Tok::Key(&t[..=eq]);
    }
    let mut hex = true;
    for &c in b {
        if c.is_ascii_digit() {
            return Tok::Var;
        }
        hex &= c.is_ascii_hexdigit();
    }
    let first = b[0];
    if (hex && b.len() >= 8)
        || first == b'"'
        || first == b'\''
        || first == b'/'
        || b.starts_with(b"~/")
        || b.starts_with(b"./")
        || t.contains("://")
        || (b.iter().filter(|&&c| c == b'/').count() >= 2 && !b.contains(&b'<'))
    {
        return Tok::Var;
    }
    Tok::Word(t)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn show(s: &str) -> String {
        let mut v = Vec::new();
        tokenize(s, &mut v);
        v.iter()
            .map(|t| match t {
                Tok::Word(w) => (*w).to_string(),
                Tok::Var => "<*>".into(),
                Tok::Key(k) => format!("{k}<*>"),
            })
            .collect::<Vec<_>>()
            .join(" ")
    }

    #[test]
    fn variables_of_every_kind_are_masked() {
        assert_eq!(
            show("conn 42 from 10.0.0.7:5432 id=7f3a user=\"bob smith\" took 15ms"),
            "conn <*> from <*> id=<*> user=<*> took <*>"
        );
        assert_eq!(
            show(
                "req 3fa85f64-5717-4562-b3fc-2c963f66afa6 read /var/log/app.log \"a b c\" deadbeefcafe"
            ),
            "req <*> read <*> <*> <*>"
        );
        assert_eq!(show("GET https://x.example/a ok 0x1F"), "GET <*> ok <*>");
        assert_eq!(
            show("Failed to open: permission denied"),
            "Failed to open: permission denied"
        );
        assert_eq!(show("  "), "");
    }

    #[test]
    fn a_long_record_is_cut_to_one_trailing_variable() {
        let line = "w ".repeat(500);
        let mut v = Vec::new();
        tokenize(&line, &mut v);
        assert_eq!(v.len(), MAX_TOKENS);
        assert_eq!(v.last(), Some(&Tok::Var));
    }
}
