//! agent-manifest
