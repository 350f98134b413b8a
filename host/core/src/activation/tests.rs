use super::*;
use std::path::PathBuf;

fn manifest(name: &str, version: &str, rest: &str) -> Manifest {
    let text = format!(
        "name: {name}\nversion: {version}\ndescription: test {name}\ntypes: [prompt]\nprompt:\n  system_prompt_file: PROMPT.md\n{rest}"
    );
    Manifest::parse(&text, &PathBuf::from(format!("{name}/SKILL.yaml")))
        .unwrap_or_else(|e| panic!("manifest {name}: {e}"))
}

struct Case {
    dir: tempfile::TempDir,
    languages: Vec<String>,
    message: String,
    mode: Mode,
    explicit: Vec<String>,
}

impl Case {
    fn new() -> Case {
        Case {
            dir: tempfile::tempdir().unwrap(),
            languages: Vec::new(),
            message: String::new(),
            mode: Mode::Interactive,
            explicit: Vec::new(),
        }
    }

    fn run(&self, manifests: &[Manifest]) -> (Vec<String>, Activation) {
        let refs: Vec<&Manifest> = manifests.iter().collect();
        let input = TriggerInput {
            project_root: self.dir.path(),
            languages: &self.languages,
            user_message: &self.message,
            mode: self.mode,
            explicit: &self.explicit,
        };
        let a = activate_manifests(&refs, &input);
        let names = a.order.iter().map(|&i| manifests[i].name.clone()).collect();
        (names, a)
    }
}

fn reason<'a>(a: &'a Activation, skill: &str) -> &'a str {
    a.reasons
        .iter()
        .find(|(s, _)| s == skill)
        .map(|(_, r)| r.as_str())
        .unwrap_or_else(|| panic!("no reason for {skill}: {:?}", a.reasons))
}

#[test]
fn no_triggers_is_always_active() {
    let (names, a) = Case::new().run(&[manifest("plain", "1.0.0", "")]);
    assert_eq!(names, ["plain"]);
    assert_eq!(reason(&a, "plain"), "always active (no triggers)");
}

#[test]
fn file_patterns_match_names_paths_and_directories() {
    let c = Case::new();
    let root = c.dir.path();
    std::fs::create_dir_all(root.join("infra/modules")).unwrap();
    std::fs::create_dir_all(root.join("k8s")).unwrap();
    std::fs::write(root.join("infra/modules/main.tf"), "").unwrap();
    let ms = [
        manifest("tf", "1.0.0", "triggers:\n  files: [\"*.tf\"]\n"),
        manifest(
            "anchored",
            "1.0.0",
            "triggers:\n  files: [\"modules/*.tf\"]\n",
        ),
        manifest("deep", "1.0.0", "triggers:\n  files: [\"infra/**/*.tf\"]\n"),
        manifest("kube", "1.0.0", "triggers:\n  files: [\"k8s/\"]\n"),
        manifest("docker", "1.0.0", "triggers:\n  files: [Dockerfile]\n"),
    ];
    let (names, a) = c.run(&ms);
    assert_eq!(names, ["deep", "kube", "tf"]);
    assert_eq!(
        reason(&a, "tf"),
        "file pattern `*.tf` matched `infra/modules/main.tf`"
    );
    assert_eq!(reason(&a, "kube"), "file pattern `k8s/` matched `k8s/`");
}

#[test]
fn gitignored_files_do_not_trigger() {
    let c = Case::new();
    let root = c.dir.path();
    std::fs::create_dir_all(root.join("build")).unwrap();
    std::fs::write(root.join(".gitignore"), "build/\n").unwrap();
    std::fs::write(root.join("build/gen.tf"), "").unwrap();
    let (names, _) = c.run(&[manifest("tf", "1.0.0", "triggers:\n  files: [\"*.tf\"]\n")]);
    assert!(names.is_empty());
}

#[test]
fn keywords_are_case_insensitive_substrings() {
    let mut c = Case::new();
    c.message = "Please REVIEW this change".into();
    let ms = [
        manifest("rev", "1.0.0", "triggers:\n  keywords: [review]\n"),
        manifest("sec", "1.0.0", "triggers:\n  keywords: [security]\n"),
    ];
    let (names, a) = c.run(&ms);
    assert_eq!(names, ["rev"]);
    assert_eq!(reason(&a, "rev"), "keyword `review` in the message");
}

#[test]
fn languages_match_detected_ones() {
    let mut c = Case::new();
    c.languages = vec!["rust".into()];
    let ms = [
        manifest("rs", "1.0.0", "triggers:\n  languages: [rust]\n"),
        manifest("go", "1.0.0", "triggers:\n  languages: [go]\n"),
    ];
    let (names, a) = c.run(&ms);
    assert_eq!(names, ["rs"]);
    assert_eq!(reason(&a, "rs"), "language `rust` detected");
}

#[test]
fn modes_restrict_and_activate() {
    let mut c = Case::new();
    c.mode = Mode::Headless;
    c.message = "review".into();
    let ms = [
        manifest("ci", "1.0.0", "triggers:\n  modes: [headless]\n"),
        manifest("wiki", "1.0.0", "triggers:\n  modes: [wiki]\n"),
        manifest(
            "tui-review",
            "1.0.0",
            "triggers:\n  modes: [interactive]\n  keywords: [review]\n",
        ),
        manifest(
            "ci-review",
            "1.0.0",
            "triggers:\n  modes: [headless]\n  keywords: [review]\n",
        ),
        manifest(
            "ci-other",
            "1.0.0",
            "triggers:\n  modes: [headless]\n  keywords: [deploy]\n",
        ),
    ];
    let (names, a) = c.run(&ms);
    assert_eq!(names, ["ci", "ci-review"]);
    assert_eq!(reason(&a, "ci"), "mode `headless`");
}

#[test]
fn explicit_wins_over_modes_and_unknown_names_are_reported() {
    let mut c = Case::new();
    c.explicit = vec!["wiki".into(), "ghost".into()];
    let ms = [manifest("wiki", "1.0.0", "triggers:\n  modes: [wiki]\n")];
    let (names, a) = c.run(&ms);
    assert_eq!(names, ["wiki"]);
    assert_eq!(reason(&a, "wiki"), "explicit (--skills)");
    assert_eq!(a.problems.len(), 1);
    assert_eq!(a.problems[0].0, "ghost");
}

#[test]
fn dependencies_come_first_and_are_pulled_in() {
    let mut c = Case::new();
    c.message = "app".into();
    let ms = [
        manifest(
            "app",
            "1.0.0",
            "triggers:\n  keywords: [app]\ndependencies:\n  - name: zlib\n    version: \"^1.2\"\n  - name: base\n",
        ),
        manifest("base", "2.0.0", "triggers:\n  keywords: [never]\n"),
        manifest(
            "zlib",
            "1.3.0",
            "triggers:\n  keywords: [never]\ndependencies:\n  - name: base\n    version: \">=2\"\n",
        ),
    ];
    let (names, a) = c.run(&ms);
    assert_eq!(names, ["base", "zlib", "app"]);
    assert_eq!(reason(&a, "zlib"), "required by `app`");
    assert!(a.problems.is_empty(), "{:?}", a.problems);
}

#[test]
fn version_mismatch_and_missing_required_block_the_dependent() {
    let mut c = Case::new();
    c.message = "go".into();
    let ms = [
        manifest(
            "x",
            "1.0.0",
            "triggers:\n  keywords: [go]\ndependencies:\n  - name: y\n    version: \"^2\"\n",
        ),
        manifest("y", "1.3.0", "triggers:\n  keywords: [never]\n"),
        manifest(
            "z",
            "1.0.0",
            "triggers:\n  keywords: [go]\ndependencies:\n  - name: missing-one\n",
        ),
    ];
    let (names, a) = c.run(&ms);
    assert!(names.is_empty(), "{names:?}");
    assert_eq!(
            a.problems,
            [
                ("x".to_string(), "`x` needs `y` ^2 but 1.3.0 is loaded".to_string()),
                (
                    "z".to_string(),
                    "`z` needs `missing-one` *, which is not installed (install it with `agent skill install missing-one`)".to_string()
                ),
            ]
        );
}

#[test]
fn optional_missing_or_mismatched_is_skipped() {
    let ms = [
        manifest(
            "x",
            "1.0.0",
            "dependencies:\n  - name: gone\n    optional: true\n  - name: old\n    version: \"^3\"\n    optional: true\n",
        ),
        manifest("old", "1.0.0", "triggers:\n  keywords: [never]\n"),
    ];
    let (names, a) = Case::new().run(&ms);
    assert_eq!(names, ["x"]);
    let notes: Vec<&str> = a
        .reasons
        .iter()
        .filter(|(s, _)| s == "x")
        .map(|(_, r)| r.as_str())
        .collect();
    assert_eq!(notes.len(), 3, "{notes:?}");
    assert!(notes[1].starts_with("optional dependency `gone` skipped"));
    assert!(notes[2].contains("needs `old` ^3 but 1.0.0 is loaded"));
    assert!(a.problems.is_empty());
}

#[test]
fn cycles_deactivate_every_member() {
    let ms = [
        manifest("a", "1.0.0", "dependencies:\n  - name: b\n"),
        manifest(
            "b",
            "1.0.0",
            "triggers:\n  keywords: [never]\ndependencies:\n  - name: a\n",
        ),
        manifest("c", "1.0.0", "dependencies:\n  - name: a\n"),
        manifest("d", "1.0.0", ""),
    ];
    let (names, a) = Case::new().run(&ms);
    assert_eq!(names, ["d"]);
    let problem = |s: &str| {
        a.problems
            .iter()
            .find(|(n, _)| n == s)
            .map(|(_, p)| p.clone())
            .unwrap_or_default()
    };
    assert_eq!(problem("a"), "dependency cycle a -> b -> a");
    assert_eq!(problem("b"), "dependency cycle a -> b -> a");
    assert!(problem("c").contains("dependency cycle a -> b -> a"));
}

#[test]
fn output_is_deterministic() {
    let mut c = Case::new();
    c.message = "x".into();
    let ms: Vec<Manifest> = ["m", "c", "q", "a"]
        .iter()
        .map(|n| manifest(n, "1.0.0", ""))
        .collect();
    let (first, a1) = c.run(&ms);
    let (second, a2) = c.run(&ms);
    assert_eq!(first, ["a", "c", "m", "q"]);
    assert_eq!(first, second);
    assert_eq!(a1, a2);
}
