//! The built-in `security-deep` prompt skill: the instructions `agent
//! security-audit --deep` gives the model (how to read the files the host
//! sends, follow a flow with the read tools, and report through
//! `report_finding`), and the checklists of its three analyses.

agent_skill_sdk::export_fragments![
    (
        "deep security analysis",
        include_str!("../prompts/analysis.md"),
        0
    ),
    (
        "checklist: auth-flow",
        include_str!("../prompts/auth-flow.md"),
        40
    ),
    ("checklist: taint", include_str!("../prompts/taint.md"), 50),
    (
        "checklist: business-logic",
        include_str!("../prompts/business-logic.md"),
        60
    ),
];
