//! The rows of the lists a frontend shows.

use serde::{Deserialize, Serialize};

/// A loaded skill, for `/skill list`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SkillRow {
    /// Its name.
    pub name: String,
    /// Its version.
    pub version: String,
    /// Where it comes from (`builtin`, `user`, `project`...).
    pub source: String,
    /// `active`, `inactive`, `on` (activated with /skill activate), `off`.
    pub state: String,
    /// Its description.
    pub description: String,
}

/// A stored permission decision, for `/permissions`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PermissionRow {
    /// The skill.
    pub skill: String,
    /// The permission.
    pub permission: String,
    /// `always` or `deny`.
    pub decision: String,
}

/// A recorded session, for `/resume`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SessionRow {
    /// Its id.
    pub id: String,
    /// Its title (the first message).
    pub title: String,
    /// When it was last used.
    pub updated: String,
    /// Turns taken.
    pub turns: u32,
}
