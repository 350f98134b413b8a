//! The built-in `wiki-base` prompt skill: the instructions `agent wiki`
//! gives the model (write one section from the parsed material, answer
//! through `write_wiki_section`, name only what exists), and what each kind
//! of section contains (module summaries, synthesis, deep-dives).

agent_skill_sdk::export_fragments![
    ("wiki generator", include_str!("../prompts/wiki.md"), 0),
    (
        "wiki section: module summary",
        include_str!("../prompts/summary.md"),
        40
    ),
    (
        "wiki sections: synthesis",
        include_str!("../prompts/synthesis.md"),
        50
    ),
    (
        "wiki section: deep-dive",
        include_str!("../prompts/deep-dive.md"),
        60
    ),
];
