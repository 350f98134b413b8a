//! agent-store
