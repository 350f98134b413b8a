//! File classifiers skills add (`wiki.classifiers` in a SKILL.yaml): a glob
//! over the file's path relative to the project root and the class its
//! files get. They are tried before [`crate::modules::classify`]'s own
//! rules, in order; the first match wins.
//!
//! Globs are `globset`'s with `*` not crossing `/` (`gen/**` is everything
//! under `gen/`, `**/*_spec.rb` every `_spec.rb` file at any depth).

use globset::{GlobBuilder, GlobMatcher};

use crate::modules::FileClass;

/// The classifiers of a run, in order.
#[derive(Debug, Clone, Default)]
pub struct Classifiers {
    rules: Vec<(GlobMatcher, FileClass)>,
}

impl Classifiers {
    /// Classifiers from `(pattern, class)` pairs, first match first.
    ///
    /// # Errors
    /// A pattern that is not a glob (naming it).
    pub fn new(rules: &[(String, FileClass)]) -> Result<Classifiers, String> {
        let rules = rules
            .iter()
            .map(|(pattern, class)| {
                GlobBuilder::new(pattern)
                    .literal_separator(true)
                    .build()
                    .map(|g| (g.compile_matcher(), *class))
                    .map_err(|e| format!("`{pattern}` is not a valid glob: {}", e.kind()))
            })
            .collect::<Result<_, _>>()?;
        Ok(Classifiers { rules })
    }

    /// The class the first matching classifier gives `path`.
    pub fn class_of(&self, path: &str) -> Option<FileClass> {
        self.rules
            .iter()
            .find(|(m, _)| m.is_match(path))
            .map(|(_, c)| *c)
    }

    /// Whether there are none.
    pub fn is_empty(&self) -> bool {
        self.rules.is_empty()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_match_wins_and_star_stays_in_its_directory() {
        let c = Classifiers::new(&[
            ("gen/**".into(), FileClass::Generated),
            ("**/*_spec.rb".into(), FileClass::Test),
            ("*.rb".into(), FileClass::Docs),
        ])
        .expect("globs");
        assert_eq!(c.class_of("gen/a/b.rs"), Some(FileClass::Generated));
        assert_eq!(c.class_of("gen/x_spec.rb"), Some(FileClass::Generated));
        assert_eq!(c.class_of("app/models/user_spec.rb"), Some(FileClass::Test));
        assert_eq!(c.class_of("user_spec.rb"), Some(FileClass::Test));
        assert_eq!(c.class_of("top.rb"), Some(FileClass::Docs));
        assert_eq!(c.class_of("app/top.rb"), None);
        assert_eq!(
            Classifiers::new(&[("gen/[a".into(), FileClass::Test)]).unwrap_err(),
            "`gen/[a` is not a valid glob: unclosed character class; missing ']'"
        );
    }
}
