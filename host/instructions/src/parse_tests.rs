//! The frontmatter: every field, both spellings, unknown keys kept, errors with file:line.

use super::*;

fn p(text: &str) -> Result<InstructionSkill, ParseError> {
    parse(Path::new("skills/demo/SKILL.md"), text)
}

#[test]
fn every_field_is_read() {
    let s = p("---
name: demo
description: Review a PR. Use when asked to review.
context: fork
model: claude-sonnet-4
tools: [Bash, Read]
allowed_tools:
  - read_file
  - grep
user-invocable: false
disable-model-invocation: true
metadata:
  wundr:
    emoji: x
    requires:
      bins: [gh]
      anyBins: [claude, codex]
      env: [GITHUB_TOKEN]
      config: [github.enabled]
    os: [darwin, linux]
homepage: https://example.invalid
---
# Body
$ARGUMENTS
")
    .unwrap();
    let f = &s.front;
    assert_eq!(f.name, "demo");
    assert_eq!(f.context, Context::Fork);
    assert_eq!(f.model.as_deref(), Some("claude-sonnet-4"));
    assert_eq!(f.tools, ["Bash", "Read"]);
    assert_eq!(
        f.allowed_tools.as_deref(),
        Some(&["read_file".to_string(), "grep".into()][..])
    );
    assert!(!f.user_invocable);
    assert!(f.disable_model_invocation);
    assert_eq!(f.requires.bins, ["gh"]);
    assert_eq!(f.requires.any_bins, ["claude", "codex"]);
    assert_eq!(f.requires.env, ["GITHUB_TOKEN"]);
    assert_eq!(f.requires.config, ["github.enabled"]);
    assert_eq!(f.os, ["darwin", "linux"]);
    assert_eq!(f.unknown.len(), 1);
    assert_eq!(f.unknown[0].key, "homepage");
    assert_eq!(f.unknown[0].line, 21);
    assert_eq!(s.body_line, 23);
    assert_eq!(s.body, "# Body\n$ARGUMENTS\n");
}

#[test]
fn defaults_and_the_other_spellings() {
    let s = p("---\nname: demo\ndescription: d\nallowed-tools: Read, Grep\n---\nbody\n").unwrap();
    assert_eq!(s.front.context, Context::Inline);
    assert!(s.front.user_invocable);
    assert!(!s.front.disable_model_invocation);
    assert_eq!(
        s.front.allowed_tools.as_deref(),
        Some(&["Read".to_string(), "Grep".into()][..])
    );
    assert!(s.front.unknown.is_empty());
}

#[test]
fn errors_name_the_file_and_line() {
    let e = p("---\nname: demo\ndescription: d\ncontext: sideways\n---\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "skills/demo/SKILL.md:4: `context`: `sideways`: expected `inline` or `fork`"
    );
    let e = p("---\nname: demo\ndescription: [unclosed\n---\n").unwrap_err();
    assert!(e.to_string().starts_with("skills/demo/SKILL.md:"), "{e}");
    assert!(e.message.contains("not valid YAML"), "{e}");
    let e = p("---\nname: Demo Skill\ndescription: d\n---\n").unwrap_err();
    assert_eq!(e.line, 2);
    let e = p("---\nname: demo\n---\nbody").unwrap_err();
    assert_eq!(
        e.to_string(),
        "skills/demo/SKILL.md:3: `description` is missing: say what the skill does and when to use it"
    );
    let e = p("# no frontmatter\n").unwrap_err();
    assert_eq!(e.line, 1);
    let e = p("---\nname: demo\ndescription: d\n").unwrap_err();
    assert!(e.message.contains("never closed"), "{e}");
    let e = p("---\nname: demo\ndescription: d\nuser-invocable: maybe\n---\n").unwrap_err();
    assert_eq!(
        e.to_string(),
        "skills/demo/SKILL.md:4: `user-invocable`: expected true or false"
    );
}

#[test]
fn the_directory_name_must_match() {
    let dir = tempfile::tempdir().unwrap();
    let d = dir.path().join("other");
    std::fs::create_dir(&d).unwrap();
    std::fs::write(d.join("SKILL.md"), "---\nname: demo\ndescription: d\n---\n").unwrap();
    let e = InstructionSkill::load(&d).unwrap_err();
    assert_eq!(e.line, 2);
    assert!(
        e.message.contains("differs from its directory `other`"),
        "{e}"
    );
}

#[test]
fn an_alias_bomb_is_refused_before_parsing() {
    let mut text =
        String::from("---\nname: demo\ndescription: d\na0: &a0 [x, x, x, x, x, x, x, x, x, x]\n");
    for i in 1..9 {
        let prev = i - 1;
        text.push_str(&format!(
            "a{i}: &a{i} [*a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}, *a{prev}]\n"
        ));
    }
    text.push_str("---\n");
    let e = p(&text).unwrap_err();
    assert!(e.to_string().starts_with("skills/demo/SKILL.md:"), "{e}");
    assert!(e.message.contains("alias"), "{e}");
}
