//! core-tools
