//! agent-runtime
