//! One module per command of the command line. Each takes the shared
//! [`App`](crate::app::App) and its own parsed arguments and returns the exit
//! code; what commands share (assembling an agent, rendering tables) lives
//! outside this directory, never in another command.

pub mod config;
pub mod deep;
pub mod doctor;
pub mod keys;
pub mod logs;
pub mod mcp;
pub mod registry;
pub mod registry_instructions;
pub mod review;
pub mod run;
pub mod security;
pub mod sessions;
pub mod shell;
pub mod skill;
pub mod tui;
pub mod wiki;
pub mod workflow;
