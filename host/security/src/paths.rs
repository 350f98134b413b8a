//! Path patterns as `.security.yaml` writes them: globs (`*_test.go`,
//! `src/**/*.py`) and directory prefixes (`test/`, `internal/repository/`).

use globset::{GlobBuilder, GlobSet, GlobSetBuilder};

/// A compiled list of path patterns.
#[derive(Debug, Clone, Default)]
pub struct PathPatterns {
    set: Option<GlobSet>,
    prefixes: Vec<String>,
}

impl PathPatterns {
    /// Compiles `patterns`. A pattern ending in `/` is a directory (at the
    /// root or anywhere below); one without `/` matches a file name at any
    /// depth; others match from the root, a directory matching also
    /// covering what is inside it.
    ///
    /// # Errors
    /// A bad glob.
    pub fn new(patterns: &[String]) -> Result<PathPatterns, globset::Error> {
        let mut b = GlobSetBuilder::new();
        let mut prefixes = Vec::new();
        let mut any = false;
        for p in patterns {
            let p = p.trim().trim_start_matches("./");
            if p.is_empty() {
                continue;
            }
            if let Some(dir) = p.strip_suffix('/') {
                if dir.contains(['*', '?', '[', '{']) {
                    any = true;
                    b.add(glob(&format!("{dir}/**"))?);
                    if !dir.starts_with("**/") {
                        b.add(glob(&format!("**/{dir}/**"))?);
                    }
                } else {
                    prefixes.push(format!("{}/", dir.trim_start_matches('/')));
                }
                continue;
            }
            any = true;
            let p = p.trim_start_matches('/');
            b.add(glob(p)?);
            b.add(glob(&format!("{p}/**"))?);
            if !p.contains('/') {
                b.add(glob(&format!("**/{p}"))?);
                b.add(glob(&format!("**/{p}/**"))?);
            }
        }
        Ok(PathPatterns {
            set: if any { Some(b.build()?) } else { None },
            prefixes,
        })
    }

    /// Whether there are no patterns.
    pub fn is_empty(&self) -> bool {
        self.set.is_none() && self.prefixes.is_empty()
    }

    /// Whether `path` (relative, `/`-separated) matches one pattern.
    pub fn matches(&self, path: &str) -> bool {
        for pre in &self.prefixes {
            if path.starts_with(pre.as_str()) || path.contains(&format!("/{pre}")) {
                return true;
            }
        }
        self.set.as_ref().is_some_and(|s| s.is_match(path))
    }
}

fn glob(p: &str) -> Result<globset::Glob, globset::Error> {
    GlobBuilder::new(p).literal_separator(true).build()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pp(list: &[&str]) -> PathPatterns {
        PathPatterns::new(&list.iter().map(|s| s.to_string()).collect::<Vec<_>>()).unwrap()
    }

    #[test]
    fn globs_and_prefixes() {
        let p = pp(&["*_test.go", "test/", "internal/repository/"]);
        assert!(p.matches("pkg/a_test.go"));
        assert!(p.matches("a_test.go"));
        assert!(p.matches("test/x.go"));
        assert!(p.matches("svc/test/x.go"));
        assert!(p.matches("internal/repository/db.go"));
        assert!(!p.matches("internal/service/db.go"));
        assert!(!p.matches("contest/x.go"));
        let q = pp(&["src/**/*.py", "docs"]);
        assert!(q.matches("src/a/b.py"));
        assert!(q.matches("src/b.py"));
        assert!(!q.matches("lib/b.py"));
        assert!(q.matches("docs/x.md"));
        assert!(pp(&[]).is_empty());
    }
}
