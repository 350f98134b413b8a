//! Discovery + parse of 200 SKILL.md skills (what `agent skill list` adds per directory).

use criterion::{Criterion, criterion_group, criterion_main};

fn fixture(n: usize) -> tempfile::TempDir {
    let dir = tempfile::tempdir().expect("tempdir");
    for i in 0..n {
        let d = dir.path().join(format!("skill-{i:03}"));
        std::fs::create_dir(&d).expect("mkdir");
        std::fs::write(
            d.join("SKILL.md"),
            format!(
                "---\nname: skill-{i:03}\ndescription: Skill number {i}. Use when asked about topic {i}.\nallowed_tools: [read_file, grep]\nmetadata:\n  requires:\n    bins: [sh]\n    env: [HOME]\n---\n# Skill {i}\n\nDo the thing with $ARGUMENTS.\n{}",
                "Some instructions line.\n".repeat(40)
            ),
        )
        .expect("write");
    }
    dir
}

fn bench(c: &mut Criterion) {
    let dir = fixture(200);
    c.bench_function("discover_and_parse_200_skill_md", |b| {
        b.iter(|| {
            let found = agent_instructions::discover_dir(dir.path());
            assert_eq!(found.skills.len(), 200);
            found
        })
    });
    let env = agent_instructions::HostEnvironment::new(|_: &str| true);
    let found = agent_instructions::discover_dir(dir.path());
    c.bench_function("eligibility_200_skill_md", |b| {
        b.iter(|| {
            found
                .skills
                .iter()
                .filter(|s| agent_instructions::ineligibility(&s.front, &env).is_empty())
                .count()
        })
    });
}

criterion_group!(benches, bench);
criterion_main!(benches);
