//! agent-builtins
