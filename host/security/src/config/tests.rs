use super::*;

fn parse(text: &str) -> Result<SecurityConfig, ConfigError> {
    SecurityConfig::parse(text, Path::new("proj/.security.yaml"))
}

const SPEC_EXAMPLE: &str = r#"rules:
  - id: "CUSTOM-001"
    title: "Direct DB queries forbidden — use repository layer"
    severity: high
    pattern:
      type: "regex"
      match: 'db\.(Query|Exec|QueryRow)\('
      exclude_paths: ["internal/repository/"]

dependencies:
  banned:
    - package: "github.com/dgrijalva/jwt-go"
      reason: "Unmaintained. Use github.com/golang-jwt/jwt/v5"

overrides:
  - id: "GO-CRYPTO-001"
    severity: "info"
    note: "MD5 used only for cache keys, not security"

ci:
  fail_on: "high"
  max_findings: 10
"#;

#[test]
fn parses_the_spec_example() {
    let c = parse(SPEC_EXAMPLE).unwrap();
    assert_eq!(c.rules.len(), 1);
    let r = &c.rules[0];
    assert_eq!(r.id, "CUSTOM-001");
    assert_eq!(r.severity, Severity::High);
    assert_eq!(r.category, "custom");
    assert_eq!(r.line, 2);
    assert_eq!(
        r.pattern,
        PatternKind::Regex(r"db\.(Query|Exec|QueryRow)\(".into())
    );
    assert_eq!(r.exclude_paths, vec!["internal/repository/".to_string()]);
    assert_eq!(c.banned[0].package, "github.com/dgrijalva/jwt-go");
    assert!(c.banned[0].reason.starts_with("Unmaintained"));
    assert_eq!(c.overrides[0].severity, Some(Severity::Info));
    assert_eq!(
        c.overrides[0].note.as_deref(),
        Some("MD5 used only for cache keys, not security")
    );
    assert_eq!(c.ci.fail_on, Some(Severity::High));
    assert_eq!(c.ci.max_findings, Some(10));
}

#[test]
fn parses_the_hipaa_rules_file() {
    let text = r#"rules:
  - id: HIPAA-LOG-001
    title: "PHI logged without redaction"
    severity: critical
    category: data-exposure
    cwe: CWE-532
    pattern:
      type: regex
      match: 'log\.(Print|Info|Debug|Warn|Error).*\b(ssn|patient|diagnosis|medication|dob)\b'
      exclude_paths: ["*_test.go", "test/"]
    remediation: "Use the PHI redaction helper before logging patient data"

  - id: HIPAA-ENCRYPT-001
    title: "PHI stored without encryption at rest"
    severity: high
    category: cryptography
    cwe: CWE-311
    pattern:
      type: tree-sitter
      query: |
        (call_expression
          function: (selector_expression field: (field_identifier) @method)
          (#match? @method "^(Insert|Create|Save|Put|Set)$"))
    remediation: "Wrap PHI data with crypto.EncryptPHI() before database storage"
"#;
    let c = parse(text).unwrap();
    assert_eq!(c.rules.len(), 2);
    assert_eq!(c.rules[0].cwe.as_deref(), Some("CWE-532"));
    assert_eq!(c.rules[0].category, "data-exposure");
    assert!(matches!(c.rules[1].pattern, PatternKind::TreeSitter(_)));
    assert_eq!(c.rules[1].line, 13);
}

#[test]
fn empty_file_is_an_empty_config() {
    let c = parse("# nothing yet\n").unwrap();
    assert!(c.rules.is_empty() && c.overrides.is_empty() && c.banned.is_empty());
}

fn err(text: &str) -> ConfigError {
    parse(text).unwrap_err()
}

#[test]
fn errors_name_file_line_and_field() {
    let e = err(
        "rules:\n  - id: A\n    severity: urgent\n    pattern:\n      type: regex\n      match: x\n",
    );
    assert_eq!(e.line, Some(3));
    assert_eq!(e.field, "rules[0].severity");
    assert!(e.message.contains("unknown severity `urgent`"), "{e}");
    assert!(
        e.to_string()
            .starts_with("proj/.security.yaml:3:5: rules[0].severity: unknown severity"),
        "{e}"
    );

    let e = err(
        "rules:\n  - id: A\n    severity: high\n    pattern:\n      type: regex\n      match: 'db\\.(Query'\n",
    );
    assert_eq!(e.field, "rules[0].pattern.match");
    assert_eq!(e.line, Some(6));
    assert!(e.message.contains("not a valid regular expression"), "{e}");

    let e = err(
        "rules:\n  - id: A\n    severity: high\n    pattern:\n      type: glob\n      match: x\n",
    );
    assert_eq!(e.field, "rules[0].pattern.type");
    assert_eq!(e.line, Some(5));

    let e = err("rules:\n  - id: A\n    severity: high\n    pattern:\n      type: regex\n");
    assert_eq!(e.field, "rules[0].pattern");
    assert!(e.message.contains("needs `match`"), "{e}");

    let e = err("ci:\n  fail_on: high\n  max_findngs: 3\n");
    assert_eq!(e.field, "ci.max_findngs");
    assert_eq!(e.line, Some(3));
    assert!(e.message.contains("unknown field `max_findngs`"), "{e}");

    let e = err("ci:\n  max_findings: many\n");
    assert_eq!(e.field, "ci.max_findings");
    assert_eq!(e.line, Some(2));

    let e = err(
        "rules:\n  - id: A\n    severity: high\n    pattern: {type: regex, match: a}\n  - id: A\n    severity: low\n    pattern: {type: regex, match: b}\n",
    );
    assert_eq!(e.field, "rules[1].id");
    assert_eq!(e.line, Some(5));
    assert!(e.message.contains("duplicate rule id"), "{e}");

    // One form per grammar: the same id with disjoint languages is fine,
    // overlapping ones are a duplicate.
    let per_grammar = "rules:\n  - id: A\n    severity: high\n    languages: [swift]\n    pattern: {type: regex, match: a}\n  - id: A\n    severity: high\n    languages: [objective-c]\n    pattern: {type: regex, match: a}\n";
    let cfg = SecurityConfig::parse(per_grammar, std::path::Path::new("r.yaml"))
        .expect("disjoint languages");
    assert_eq!(cfg.rules.len(), 2);
    let e = err(&per_grammar.replace("[objective-c]", "[objective-c, swift]"));
    assert_eq!(e.field, "rules[1].id");
    assert!(e.message.contains("duplicate rule id `A`"), "{e}");

    let e = err("rules: [\n");
    assert!(e.line.is_some());
    assert!(e.message.contains("not valid YAML"), "{e}");

    let e = err("overrides:\n  - id: X\n");
    assert_eq!(e.field, "overrides[0]");
    assert_eq!(e.line, Some(2));

    let e = err(
        "rules:\n  - id: A\n    severity: high\n    languages: [cobol]\n    pattern: {type: regex, match: a}\n",
    );
    assert_eq!(e.field, "rules[0].languages[0]");
    assert!(e.message.contains("unknown language `cobol`"), "{e}");

    let e = err("allowlist:\n  regexes: ['(']\n");
    assert_eq!(e.field, "allowlist.regexes[0]");
    assert_eq!(e.line, Some(2));

    let e = err("dependencies:\n  banned:\n    - reason: no\n");
    assert_eq!(e.field, "dependencies.banned[0]");
    assert!(e.message.contains("missing field `package`"), "{e}");
}

#[test]
fn tree_sitter_queries_for_named_languages_are_checked() {
    let e = err(
        "rules:\n  - id: T\n    severity: high\n    languages: [python]\n    pattern:\n      type: tree-sitter\n      query: '(no_such_node) @x'\n",
    );
    assert_eq!(e.field, "rules[0].pattern.query");
    assert!(e.message.contains("not a valid python query"), "{e}");
}

#[test]
fn merge_keeps_the_first_ci_settings() {
    let mut a = parse("ci:\n  fail_on: critical\n").unwrap();
    let b = parse(SPEC_EXAMPLE).unwrap();
    a.merge(b);
    assert_eq!(a.ci.fail_on, Some(Severity::Critical));
    assert_eq!(a.ci.max_findings, Some(10));
    assert_eq!(a.rules.len(), 1);
}

#[test]
fn nesting_deeper_than_the_limit_is_refused_before_parsing_with_file_and_line() {
    // 200 KB of nested lists overflowed the stack (exit 134) in the line
    // index and serde_yaml; 200 KB of `[` took seconds to refuse.
    for (text, line, column) in [
        (format!("rules:\n  {}x\n", "- ".repeat(100_000)), 2, 129),
        // Flow brackets: yaml-rust2 reads ahead and stops at its own 255
        // open collections, which is where the error points.
        (format!("rules: {}", "[".repeat(200_000)), 1, 263),
    ] {
        let started = std::time::Instant::now();
        let err = parse(&text).unwrap_err();
        assert!(started.elapsed() < std::time::Duration::from_secs(1));
        assert_eq!((err.line, err.field.as_str()), (Some(line), ""));
        assert!(
            err.to_string()
                .starts_with(&format!("proj/.security.yaml:{line}:")),
            "{err}"
        );
        assert!(
            err.message
                .ends_with("YAML nested deeper than the limit of 64 levels; flatten the document"),
            "{err}"
        );
        assert_eq!(err.column, Some(column), "{err}");
    }
}
