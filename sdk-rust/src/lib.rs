//! agent-skill-sdk
