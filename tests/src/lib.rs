//! agent-tests
