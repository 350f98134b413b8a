//! Skill activation: trigger evaluation and dependency order (being written).
