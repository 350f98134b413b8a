//! agent-trust
