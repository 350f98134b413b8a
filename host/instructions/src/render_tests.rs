//! Substitution and dynamic context.

use super::*;
use crate::parse::parse;

fn skill(dir: &Path, body: &str) -> InstructionSkill {
    let mut s = parse(
        &dir.join("SKILL.md"),
        &format!("---\nname: demo\ndescription: d\n---\n{body}"),
    )
    .unwrap();
    s.dir = dir.to_path_buf();
    s
}

#[test]
fn arguments_are_substituted() {
    let d = tempfile::tempdir().unwrap();
    let s = skill(
        d.path(),
        "All: $ARGUMENTS\nFirst: $1, second: $2, none: [$3]\n",
    );
    let r = render(&s, "123 \"two words\"", &mut |_| unreachable!());
    assert_eq!(
        r.text,
        "All: 123 \"two words\"\nFirst: 123, second: two words, none: []\n"
    );
}

#[test]
fn commands_go_through_the_runner_and_shell_syntax_is_left_out() {
    let d = tempfile::tempdir().unwrap();
    std::fs::create_dir(d.path().join("scripts")).unwrap();
    std::fs::write(d.path().join("scripts/x.sh"), "echo hi").unwrap();
    std::fs::write(d.path().join("ref.md"), "REFERENCE").unwrap();
    let s = skill(
        d.path(),
        "!git log -n $1\n!gh pr view $ARGUMENTS | head\n!scripts/x.sh a\n!read ref.md\n!read ../etc/passwd\n```\n!not run in a fence\n```\n",
    );
    let mut seen = Vec::new();
    let r = render(&s, "3 'x y'", &mut |c| {
        seen.push((c.program.clone(), c.args.clone(), c.line));
        RunOutcome::Output(format!("<{}>", c.program.rsplit('/').next().unwrap()))
    });
    assert_eq!(
        seen[0],
        ("git".into(), vec!["log".into(), "-n".into(), "3".into()], 5)
    );
    assert!(seen[1].0.ends_with("/scripts/x.sh"), "{seen:?}");
    assert_eq!(seen.len(), 2);
    assert!(r.text.contains("<git>\n"));
    assert!(r.text.contains("REFERENCE\n"));
    assert!(r.text.contains("!not run in a fence"));
    assert_eq!(r.left_out.len(), 2);
    assert_eq!(r.left_out[0].line, 6);
    assert!(r.left_out[0].reason.contains("shell syntax `|`"));
    assert!(r.left_out[1].reason.contains("not a path inside"));
}

#[test]
fn an_argument_never_becomes_shell_syntax() {
    let d = tempfile::tempdir().unwrap();
    let s = skill(d.path(), "!echo $ARGUMENTS\n");
    let mut args = Vec::new();
    render(&s, "a; rm -rf /", &mut |c| {
        args = c.args.clone();
        RunOutcome::Output(String::new())
    });
    assert_eq!(args, ["a;", "rm", "-rf", "/"]);
}
