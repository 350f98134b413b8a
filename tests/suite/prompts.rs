//! Skill activation (triggers, dependency order) and prompt skills'
//! fragments fitted to their budget, with skills loaded from real
//! manifests: component-less prompt skills and the `guest-prompt`
//! component.

use std::path::Path;

use agent_core::activation::{Activation, TriggerInput, activate};
use agent_core::prompt::{
    PromptInput, SkillPrompt, assemble, estimate_text_tokens, skill_prompts, trim_marker,
};
use agent_manifest::Mode;
use agent_runtime::{Origin, Skill, SkillPackage};
use agent_tests::write_skill;

use crate::common::{Harness, guest};

/// Loads a component-less prompt skill: `SKILL.yaml` with `rest` appended
/// and a `PROMPT.md` saying `prompt`.
fn prompt_skill(h: &Harness, name: &str, version: &str, rest: &str, prompt: &str) -> Skill {
    let dir = h.sandbox.home.path().join("skill-src").join(name);
    std::fs::create_dir_all(&dir).unwrap();
    let manifest = format!(
        "name: {name}\nversion: {version}\ndescription: test prompt skill {name}\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\n{rest}"
    );
    std::fs::write(dir.join("SKILL.yaml"), manifest).unwrap();
    std::fs::write(dir.join("PROMPT.md"), prompt).unwrap();
    load_dir(h, &dir)
}

fn load_dir(h: &Harness, dir: &Path) -> Skill {
    let pkg = SkillPackage::from_dir(dir, Origin::Path).expect("reading the skill");
    h.runtime.load(pkg, &h.trust).expect("loading the skill")
}

/// Loads the `guest-prompt` component (signed) as skill `name` with a
/// `PROMPT.md` and the given prompt settings.
fn guest_skill(h: &Harness, name: &str, prompt_settings: &str) -> Skill {
    let dir = h.sandbox.home.path().join("skill-src").join(name);
    let manifest = format!(
        "name: {name}\nversion: 1.0.0\ndescription: test prompt component\ntypes: [prompt]\nimplementation:\n  component: skill.wasm\nprompt:\n{prompt_settings}"
    );
    write_skill(&dir, &manifest, &guest("guest-prompt"), Some(&h.key));
    std::fs::write(dir.join("PROMPT.md"), "Always follow the house rules.\n").unwrap();
    // The signature covers PROMPT.md too: sign again now that it exists.
    agent_tests::sign_skill_dir(&dir, &h.key);
    load_dir(h, &dir)
}

struct Run<'a> {
    languages: Vec<String>,
    message: &'a str,
    mode: Mode,
    explicit: Vec<String>,
}

impl Run<'_> {
    fn new() -> Self {
        Run {
            languages: Vec::new(),
            message: "",
            mode: Mode::Interactive,
            explicit: Vec::new(),
        }
    }

    fn activate(&self, root: &Path, skills: &[Skill]) -> Activation {
        activate(
            skills,
            &TriggerInput {
                project_root: root,
                languages: &self.languages,
                user_message: self.message,
                mode: self.mode,
                explicit: &self.explicit,
            },
        )
    }
}

fn reason_of<'a>(a: &'a Activation, skill: &str) -> &'a str {
    a.reasons
        .iter()
        .find(|(s, _)| s == skill)
        .map(|(_, r)| r.as_str())
        .unwrap_or_else(|| panic!("`{skill}` is not active: {a:?}"))
}

fn problem_of<'a>(a: &'a Activation, skill: &str) -> &'a str {
    a.problems
        .iter()
        .find(|(s, _)| s == skill)
        .map(|(_, r)| r.as_str())
        .unwrap_or_else(|| panic!("no problem for `{skill}`: {a:?}"))
}

#[test]
fn triggers_activate_skills() {
    let h = Harness::new(&[]);
    let root = h.project();
    std::fs::create_dir_all(root.join("infra")).unwrap();
    std::fs::write(root.join("infra/main.tf"), "").unwrap();
    std::fs::write(root.join(".gitignore"), "vendor/\n").unwrap();
    std::fs::create_dir_all(root.join("vendor")).unwrap();
    std::fs::write(root.join("vendor/Dockerfile"), "").unwrap();
    let skills = vec![
        prompt_skill(
            &h,
            "terraform",
            "1.0.0",
            "triggers:\n  files: [\"*.tf\"]\n",
            "tf",
        ),
        prompt_skill(
            &h,
            "docker",
            "1.0.0",
            "triggers:\n  files: [Dockerfile]\n",
            "d",
        ),
        prompt_skill(
            &h,
            "reviewer",
            "1.0.0",
            "triggers:\n  keywords: [Review]\n",
            "r",
        ),
        prompt_skill(
            &h,
            "rusty",
            "1.0.0",
            "triggers:\n  languages: [rust]\n",
            "rs",
        ),
        prompt_skill(
            &h,
            "gopher",
            "1.0.0",
            "triggers:\n  languages: [go]\n",
            "go",
        ),
        prompt_skill(&h, "ci", "1.0.0", "triggers:\n  modes: [headless]\n", "ci"),
        prompt_skill(
            &h,
            "tui-review",
            "1.0.0",
            "triggers:\n  modes: [interactive]\n  keywords: [review]\n",
            "t",
        ),
        prompt_skill(&h, "wiki", "1.0.0", "triggers:\n  modes: [wiki]\n", "w"),
        prompt_skill(&h, "always", "1.0.0", "", "a"),
    ];
    let mut run = Run::new();
    run.languages = vec!["rust".into()];
    run.message = "please review main.tf";
    run.mode = Mode::Headless;
    run.explicit = vec!["wiki".into()];
    let a = run.activate(root, &skills);
    let names = a.names(&skills);
    assert_eq!(
        names,
        ["always", "ci", "reviewer", "rusty", "terraform", "wiki"]
    );
    assert_eq!(
        reason_of(&a, "terraform"),
        "file pattern `*.tf` matched `infra/main.tf`"
    );
    assert_eq!(reason_of(&a, "reviewer"), "keyword `Review` in the message");
    assert_eq!(reason_of(&a, "rusty"), "language `rust` detected");
    assert_eq!(reason_of(&a, "ci"), "mode `headless`");
    assert_eq!(reason_of(&a, "wiki"), "explicit (--skills)");
    assert_eq!(reason_of(&a, "always"), "always active (no triggers)");
    assert!(a.problems.is_empty(), "{:?}", a.problems);

    // The same skills in interactive mode: the mode-restricted ones swap.
    run.mode = Mode::Interactive;
    run.explicit.clear();
    let a = run.activate(root, &skills);
    assert!(a.is_active(&skills, "tui-review"));
    assert!(!a.is_active(&skills, "ci"));
    assert!(!a.is_active(&skills, "wiki"));
}

#[test]
fn dependencies_are_ordered_and_checked() {
    let h = Harness::new(&[]);
    let dep = |name: &str, req: &str, optional: bool| {
        format!("  - name: {name}\n    version: \"{req}\"\n    optional: {optional}\n")
    };
    let never = "triggers:\n  keywords: [never-said]\n";
    let skills = vec![
        prompt_skill(
            &h,
            "app",
            "1.0.0",
            &format!(
                "dependencies:\n{}{}",
                dep("lib", "^1.2", false),
                dep("extras", "*", true)
            ),
            "app",
        ),
        prompt_skill(
            &h,
            "lib",
            "1.3.0",
            &format!("{never}dependencies:\n{}", dep("base", ">=2", false)),
            "lib",
        ),
        prompt_skill(&h, "base", "2.1.0", never, "base"),
        prompt_skill(
            &h,
            "x",
            "1.0.0",
            &format!("dependencies:\n{}", dep("y", "^2", false)),
            "x",
        ),
        prompt_skill(&h, "y", "1.3.0", never, "y"),
        prompt_skill(
            &h,
            "needs-gone",
            "1.0.0",
            &format!("dependencies:\n{}", dep("gone", "*", false)),
            "n",
        ),
        prompt_skill(
            &h,
            "loop-a",
            "1.0.0",
            &format!("dependencies:\n{}", dep("loop-b", "*", false)),
            "la",
        ),
        prompt_skill(
            &h,
            "loop-b",
            "1.0.0",
            &format!("{never}dependencies:\n{}", dep("loop-a", "*", false)),
            "lb",
        ),
    ];
    let a = Run::new().activate(h.project(), &skills);
    assert_eq!(a.names(&skills), ["base", "lib", "app"]);
    assert_eq!(reason_of(&a, "lib"), "required by `app`");
    assert_eq!(reason_of(&a, "base"), "required by `lib`");
    assert!(
        a.reasons
            .iter()
            .any(|(s, r)| s == "app" && r.starts_with("optional dependency `extras` skipped")),
        "{:?}",
        a.reasons
    );
    assert_eq!(problem_of(&a, "x"), "`x` needs `y` ^2 but 1.3.0 is loaded");
    assert!(
        problem_of(&a, "needs-gone").contains("`gone` *, which is not installed"),
        "{a:?}"
    );
    assert_eq!(
        problem_of(&a, "loop-a"),
        "dependency cycle loop-a -> loop-b -> loop-a"
    );
    assert_eq!(
        problem_of(&a, "loop-b"),
        "dependency cycle loop-a -> loop-b -> loop-a"
    );
    // Same input, same output.
    assert_eq!(a, Run::new().activate(h.project(), &skills));
}

#[tokio::test]
async fn guest_fragments_are_trimmed_to_the_budget() {
    let h = Harness::new(&[]);
    let budget = 200;
    let skill = guest_skill(
        &h,
        "guided",
        &format!("  system_prompt_file: PROMPT.md\n  max_context_tokens: {budget}\n"),
    );
    let skills = vec![skill];
    let languages = vec!["rust".to_string(), "go".to_string()];
    let input = PromptInput {
        mode: "headless",
        user_message: "Please REVIEW the parser",
        languages: &languages,
    };
    let (prompts, warnings) = skill_prompts(&h.runtime, &h.ctx, &skills, &[0], &input).await;
    assert!(warnings.is_empty(), "{warnings:?}");
    let [p]: [SkillPrompt; 1] = prompts.try_into().unwrap();
    assert_eq!(p.skill, "guided");
    assert_eq!(p.budget, budget);
    assert_eq!(
        p.fragments,
        ["PROMPT.md", "context", "keyword", "budget", "reference"]
    );
    assert_eq!(p.dropped, ["reference", "appendix"]);
    assert!(p.tokens <= budget, "{} > {budget}", p.tokens);
    assert_eq!(p.tokens, estimate_text_tokens(&p.text));
    assert!(p.text.starts_with(
        "Always follow the house rules.\n\nMode: headless. Languages: rust, go.\n\nThe user asked about \"review\".\n\nBudget: 200 tokens.\n\nReference line 001"
    ));
    assert!(p.text.ends_with(&trim_marker(budget)), "{}", p.text);
    assert!(!p.text.contains("Appendix"));

    // A budget large enough for everything keeps everything, untrimmed.
    let roomy = guest_skill(&h, "roomy", "  max_context_tokens: 100000\n");
    let (prompts, _) = skill_prompts(&h.runtime, &h.ctx, &[roomy], &[0], &input).await;
    assert_eq!(
        prompts[0].fragments,
        ["context", "keyword", "budget", "reference", "appendix"]
    );
    assert!(prompts[0].dropped.is_empty());
    assert!(prompts[0].text.contains("Reference line 100"));
    assert!(!prompts[0].text.contains("trimmed"));
}

#[tokio::test]
async fn system_prompt_files_and_missing_files() {
    let h = Harness::new(&[]);
    let skills = vec![
        prompt_skill(
            &h,
            "house",
            "1.0.0",
            "  context_files: [GUIDE.md, missing.md]\n",
            "# House rules\nUse tabs.\n",
        ),
        prompt_skill(&h, "other", "1.0.0", "", "Other rules.\n"),
    ];
    std::fs::write(
        skills[0].dir.as_ref().unwrap().join("GUIDE.md"),
        "A longer guide.\n",
    )
    .unwrap();
    let input = PromptInput {
        mode: "interactive",
        user_message: "",
        languages: &[],
    };
    let (prompts, warnings) = skill_prompts(&h.runtime, &h.ctx, &skills, &[1, 0], &input).await;
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(
        warnings[0].contains("skill `house`") && warnings[0].contains("missing.md"),
        "{warnings:?}"
    );
    let names: Vec<&str> = prompts.iter().map(|p| p.skill.as_str()).collect();
    assert_eq!(names, ["other", "house"]);
    assert_eq!(prompts[1].fragments, ["PROMPT.md", "GUIDE.md"]);
    assert_eq!(
        prompts[1].text,
        "# House rules\nUse tabs.\n\nA longer guide."
    );
    assert_eq!(prompts[1].budget, 4000);
    let full = assemble("BASE", &prompts, &["hook text".to_string()]);
    assert_eq!(
        full,
        "BASE\n\n## Skill: other\n\nOther rules.\n\n## Skill: house\n\n# House rules\nUse tabs.\n\nA longer guide.\n\nhook text"
    );
}
