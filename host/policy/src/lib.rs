//! agent-policy
