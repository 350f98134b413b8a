use std::path::Path;

use super::*;
use crate::config::SecurityConfig;
use crate::finding::Severity;

fn set(yaml: &str, skill: Option<&str>) -> RuleSet {
    let cfg = SecurityConfig::parse(yaml, Path::new(".security.yaml")).unwrap();
    let mut s = RuleSet::new();
    s.add(&cfg.rules, skill).unwrap();
    s
}

const DB_RULE: &str = r#"rules:
  - id: CUSTOM-001
    title: Direct DB queries forbidden
    severity: high
    cwe: "89"
    pattern:
      type: regex
      match: 'db\.(Query|Exec|QueryRow)\('
      exclude_paths: ["internal/repository/", "*_test.go"]
"#;

#[test]
fn regex_rules_report_each_matching_line() {
    let s = set(DB_RULE, None);
    let src = "package x\n\nfunc f() {\n\trows, _ := db.Query(q)\n\t_ = db.Exec(q) // again\n}\n";
    let (found, errs) = s.scan("svc/users.go", Some("go"), src);
    assert!(errs.is_empty());
    assert_eq!(found.len(), 2);
    let f = &found[0];
    assert_eq!(f.rule_id, "CUSTOM-001");
    assert_eq!(f.scanner, "rules");
    assert_eq!(f.skill_source, None);
    assert_eq!(f.severity, Severity::High);
    assert_eq!(f.cwe.as_deref(), Some("CWE-89"));
    assert_eq!(f.location.start_line, 4);
    assert_eq!(f.location.start_column, 13);
    assert_eq!(f.location.end_column, 22);
    assert_eq!(f.evidence, "rows, _ := db.Query(q)");
    assert_eq!(found[1].location.start_line, 5);
    assert_ne!(found[0].id, found[1].id);
}

#[test]
fn regex_rules_honour_exclude_paths_paths_and_languages() {
    let s = set(DB_RULE, None);
    let src = "db.Query(x)\n";
    assert!(
        s.scan("internal/repository/r.go", Some("go"), src)
            .0
            .is_empty()
    );
    assert!(s.scan("svc/r_test.go", Some("go"), src).0.is_empty());
    assert_eq!(s.scan("svc/r.go", Some("go"), src).0.len(), 1);

    let scoped = set(
        "rules:\n  - id: P\n    severity: low\n    paths: ['src/']\n    languages: [python]\n    pattern: {type: regex, match: 'eval\\('}\n",
        Some("my-skill"),
    );
    assert!(
        scoped
            .scan("lib/a.py", Some("python"), "eval(x)\n")
            .0
            .is_empty()
    );
    assert!(
        scoped
            .scan("src/a.js", Some("javascript"), "eval(x)\n")
            .0
            .is_empty()
    );
    let (found, _) = scoped.scan("src/a.py", Some("python"), "eval(x)\n");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].scanner, "my-skill/rules");
    assert_eq!(found[0].skill_source.as_deref(), Some("my-skill"));
    assert!(scoped.wants("src/a.py", Some("python")));
    assert!(!scoped.wants("src/a.rb", Some("ruby")));
}

#[test]
fn tree_sitter_rules_use_the_named_or_first_capture() {
    let s = set(
        r#"rules:
  - id: HIPAA-ENCRYPT-001
    title: PHI stored without encryption at rest
    severity: high
    category: cryptography
    pattern:
      type: tree-sitter
      query: |
        (call_expression
          function: (selector_expression field: (field_identifier) @method)
          (#match? @method "^(Insert|Create|Save|Put|Set)$"))
"#,
        Some("hipaa-compliance"),
    );
    let go = "package main\n\nfunc main() {\n\tstore.Save(patient)\n\tstore.Load(patient)\n}\n";
    let (found, errs) = s.scan("main.go", Some("go"), go);
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].location.start_line, 4);
    assert_eq!(found[0].location.start_column, 8);
    assert_eq!(found[0].location.end_column, 12);
    assert_eq!(found[0].evidence, "store.Save(patient)");
    // No `languages`: a query that does not fit another grammar is no error.
    let (found, errs) = s.scan("a.py", Some("python"), "store.Save(p)\n");
    assert!(found.is_empty() && errs.is_empty(), "{errs:?}");
    // Files without a grammar are not handed to tree-sitter rules.
    assert!(!s.wants("README.md", None));

    let named = set(
        "rules:\n  - id: PY-EVAL\n    severity: medium\n    languages: [python]\n    pattern:\n      type: tree-sitter\n      query: '(call function: (identifier) @fn (#eq? @fn \"eval\") arguments: (argument_list) @PY-EVAL)'\n",
        None,
    );
    let (found, errs) = named.scan("x.py", Some("python"), "a = 1\nb = eval(  a )\n");
    assert!(errs.is_empty(), "{errs:?}");
    assert_eq!(found.len(), 1);
    assert_eq!(found[0].location.start_line, 2);
    assert_eq!(found[0].location.start_column, 9);
}

#[test]
fn a_hostile_tree_sitter_rule_is_stopped_at_its_time_limit_and_reported() {
    // The query that kept the host busy for minutes over a 240-line file.
    let mut s = set(
        "rules:\n  - id: SLOW\n    severity: low\n    languages: [python]\n    pattern:\n      type: tree-sitter\n      query: '((_) @c . (_)* @d)'\n",
        None,
    );
    s.query_time = std::time::Duration::from_millis(300);
    let source: String = (0..240)
        .map(|i| format!("value_{i} = call_{i}(a, b, c)\n"))
        .collect();
    let started = std::time::Instant::now();
    let (found, errs) = s.scan("slow.py", Some("python"), &source);
    let took = started.elapsed();
    assert!(found.is_empty(), "{found:?}");
    assert_eq!(errs.len(), 1, "{errs:?}");
    assert_eq!(errs[0].rule_id, "SLOW");
    assert!(
        errs[0].message.contains("stopped at its deadline"),
        "the error says the query ran out of time: {}",
        errs[0].message
    );
    assert!(took < std::time::Duration::from_secs(5), "took {took:?}");
}
