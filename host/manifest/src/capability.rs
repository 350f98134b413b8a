//! The capability table: for each permission, the WIT interfaces it unlocks, what else the
//! component gets, the kind of scope a use carries, how a scope is normalised and when a
//! grant covers a use.
//!
//! Every place that maps a permission onto a capability asks this table: the manifest's
//! scope lists (`exec`, `hosts`, `env`), the runtime's load-time import check and its host
//! imports, `--allow` / `--capabilities` parsing and grant matching (`agent-policy`), the
//! registry's update plan and the CLI's listings. It lives here, in the crate at the bottom of
//! the graph, because the manifest's own checks need it and every other crate depends on
//! this one; `agent-policy` re-exports it as `agent_policy::capability`.
//!
//! Interface names are bare (`exec`, `http`): the runtime spells the versioned names
//! (`agent:skill/exec@0.2.0`) through its `contract` module.

use crate::exec_rules::env_write_refusal;
use crate::host::HostPattern;
use crate::origin::Origin;
use crate::permission::Permission;
use crate::rules::{is_env_name, is_program_name, is_skill_name};

/// What a use of a permission names, and so what a grant may be limited to.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ScopeKind {
    /// Nothing: the permission is granted as a whole.
    Whole,
    /// A program as the skill passes it to `exec` (`git`, `/usr/bin/git`).
    Program,
    /// An http(s) origin (`https://api.example.com`), compared normalised (see
    /// [`crate::origin`]).
    Origin,
    /// An environment variable name (`KUBECONFIG`).
    EnvName,
    /// A skill name (`git`).
    SkillName,
}

/// A top-level manifest list that bounds the scopes of a permission.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ManifestList {
    /// `exec`: the programs `shell:exec` may run (empty: any).
    Exec,
    /// `hosts`: the origins `net:fetch` may reach.
    Hosts,
    /// `env`: the variables `env:read` and `env:write` cover.
    Env,
}

impl ManifestList {
    /// The field name in `SKILL.yaml`.
    pub fn field(self) -> &'static str {
        match self {
            ManifestList::Exec => "exec",
            ManifestList::Hosts => "hosts",
            ManifestList::Env => "env",
        }
    }

    /// Whether `declares` holds for a permission this list bounds: whether the list may be
    /// given at all.
    pub fn is_declared(self, declares: &dyn Fn(Permission) -> bool) -> bool {
        TABLE
            .iter()
            .any(|c| c.manifest_list == Some(self) && declares(c.permission))
    }
}

/// One row of the table.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Capability {
    /// The permission.
    pub permission: Permission,
    /// The `agent:skill` interfaces it unlocks, bare names.
    pub interfaces: &'static [&'static str],
    /// What else the component gets (a WASI preopen or environment), empty when nothing.
    pub wasi: &'static str,
    /// What a use names.
    pub scope: ScopeKind,
    /// The manifest list that bounds its scopes, if any.
    pub manifest_list: Option<ManifestList>,
}

/// The interfaces every component may import without declaring anything.
pub const FREE_INTERFACES: [&str; 5] = ["types", "log", "project", "config", "syntax"];

/// The table, one row per permission in [`Permission::ALL`] order.
pub const TABLE: [Capability; 10] = [
    Capability {
        permission: Permission::FileRead,
        interfaces: &[],
        wasi: "the project root preopened read-only",
        scope: ScopeKind::Whole,
        manifest_list: None,
    },
    Capability {
        permission: Permission::FileWrite,
        interfaces: &[],
        wasi: "the project root preopened read-write",
        scope: ScopeKind::Whole,
        manifest_list: None,
    },
    Capability {
        permission: Permission::ShellExec,
        interfaces: &["exec"],
        wasi: "",
        scope: ScopeKind::Program,
        manifest_list: Some(ManifestList::Exec),
    },
    Capability {
        permission: Permission::NetFetch,
        interfaces: &["http"],
        wasi: "",
        scope: ScopeKind::Origin,
        manifest_list: Some(ManifestList::Hosts),
    },
    Capability {
        permission: Permission::LlmCall,
        interfaces: &["llm"],
        wasi: "",
        scope: ScopeKind::Whole,
        manifest_list: None,
    },
    Capability {
        permission: Permission::GitRead,
        interfaces: &["git"],
        wasi: "",
        scope: ScopeKind::Whole,
        manifest_list: None,
    },
    Capability {
        permission: Permission::GitWrite,
        interfaces: &["git-write"],
        wasi: "",
        scope: ScopeKind::Whole,
        manifest_list: None,
    },
    Capability {
        permission: Permission::EnvRead,
        interfaces: &[],
        wasi: "the variables of the manifest's `env` list in the WASI environment",
        scope: ScopeKind::EnvName,
        manifest_list: Some(ManifestList::Env),
    },
    Capability {
        permission: Permission::EnvWrite,
        interfaces: &[],
        wasi: "",
        scope: ScopeKind::EnvName,
        manifest_list: Some(ManifestList::Env),
    },
    Capability {
        permission: Permission::SkillInvoke,
        interfaces: &["skills"],
        wasi: "",
        scope: ScopeKind::SkillName,
        manifest_list: None,
    },
];

// One row per permission (their order is checked by a test).
const _: () = assert!(TABLE.len() == Permission::ALL.len());

impl Permission {
    /// This permission's row of the capability table.
    pub fn capability(self) -> &'static Capability {
        // The rows are in declaration order (checked by a test), so the discriminant is
        // the row's index.
        &TABLE[self as usize]
    }
}

/// What importing an `agent:skill` interface requires.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum InterfaceNeed {
    /// Nothing: every component may import it.
    Nothing,
    /// This permission, declared.
    Permission(Permission),
    /// The contract has no such interface.
    Unknown,
}

/// What importing interface `iface` (bare name) requires.
pub fn interface_need(iface: &str) -> InterfaceNeed {
    if FREE_INTERFACES.contains(&iface) {
        return InterfaceNeed::Nothing;
    }
    TABLE
        .iter()
        .find(|c| c.interfaces.contains(&iface))
        .map_or(InterfaceNeed::Unknown, |c| {
            InterfaceNeed::Permission(c.permission)
        })
}

impl ScopeKind {
    /// The form of a scope, for messages; `None` for [`ScopeKind::Whole`].
    pub fn syntax(self) -> Option<&'static str> {
        Some(match self {
            ScopeKind::Program => {
                "PROGRAM: a bare program name as the skill passes it (`git`, `clang-format`) or a plain absolute path (`/usr/bin/git`)"
            }
            ScopeKind::Origin => {
                "ORIGIN: `http://` or `https://`, one host (a DNS name, an IPv4 or a bracketed IPv6 address) and an optional port, e.g. `https://api.example.com`"
            }
            ScopeKind::EnvName => {
                "NAME: a variable name of letters, digits and `_`, not starting with a digit, e.g. `KUBECONFIG`"
            }
            ScopeKind::SkillName => {
                "SKILL: a skill name of lowercase letters, digits and single hyphens, e.g. `git`"
            }
            ScopeKind::Whole => return None,
        })
    }

    /// Whether a grant limited to `granted` covers a use naming `used`. Origins are compared
    /// normalised (a grant's origin covers every URL of that origin); everything else must be
    /// equal.
    pub fn covers(self, granted: &str, used: &str) -> bool {
        match self {
            ScopeKind::Origin => match (origin_pattern(granted), origin_pattern(used)) {
                (Some(g), Some(u)) => g.covers(&u),
                _ => false,
            },
            _ => granted == used,
        }
    }
}

/// The origin (or `hosts:` pattern) of `scope` as a [`HostPattern`]: the path of a URL is
/// dropped, the origin normalised.
fn origin_pattern(scope: &str) -> Option<HostPattern> {
    let (origin, _) = Origin::split(scope)?;
    HostPattern::parse(&origin.to_string()).ok()
}

impl Capability {
    /// Checks that a grant's `scope` has the form of what the host names when the permission
    /// is used, so that it can match; `Err` says why no use can carry it. Call it only for a
    /// permission whose scope is not [`ScopeKind::Whole`].
    pub fn check_scope(&self, scope: &str) -> Result<(), String> {
        match self.scope {
            ScopeKind::Whole => Err(format!(
                "{} takes no scope (it is granted as a whole)",
                self.permission
            )),
            ScopeKind::Program if !is_program_name(scope) => {
                Err("it is neither a bare program name nor a plain absolute path".into())
            }
            ScopeKind::EnvName if !is_env_name(scope) => Err("it is not a variable name".into()),
            ScopeKind::EnvName if self.permission == Permission::EnvWrite => {
                match env_write_refusal(scope) {
                    Some(why) => Err(format!(
                        "`{scope}` is never passed to programs, whatever is granted ({why})"
                    )),
                    None => Ok(()),
                }
            }
            ScopeKind::SkillName if !is_skill_name(scope) => Err("it is not a skill name".into()),
            ScopeKind::Origin => check_origin(scope),
            _ => Ok(()),
        }
    }
}

/// A `net:fetch` grant scope the `http` import can ask for: an http(s) origin naming one host.
fn check_origin(scope: &str) -> Result<(), String> {
    let Some(origin) = Origin::of(scope) else {
        return Err("it is not an origin".into());
    };
    let authority = scope.split_once("://").map_or("", |(_, rest)| {
        rest.split(['/', '\\', '?', '#']).next().unwrap_or_default()
    });
    if authority.contains('@') {
        return Err(format!(
            "user info is not part of an origin: it names `{origin}` (write that origin)"
        ));
    }
    let scheme = origin.scheme();
    if scheme != "http" && scheme != "https" {
        return Err(format!(
            "the scheme `{scheme}` is never fetched (the `http` import speaks http and https)"
        ));
    }
    if origin.host().contains('*') {
        return Err(
            "a wildcard matches nothing here: a use names one origin (grant each origin, or net:fetch without a scope)".into(),
        );
    }
    HostPattern::parse(&origin.to_string())
        .map(|_| ())
        .map_err(|e| format!("it is not a valid origin ({e})"))
}

/// Whether a grant limited to `granted` (`None`: the whole permission) covers a use of
/// `permission` naming `used` (`None`: a use that names nothing, which only a whole grant
/// covers). See [`ScopeKind::covers`].
pub fn covers(permission: Permission, granted: Option<&str>, used: Option<&str>) -> bool {
    match (granted, used) {
        (None, _) => true,
        (Some(_), None) => false,
        (Some(g), Some(u)) => permission.capability().scope.covers(g, u),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_row_per_permission_in_order() {
        for (row, p) in TABLE.iter().zip(Permission::ALL) {
            assert_eq!(row.permission, p);
            assert_eq!(p.capability().permission, p);
        }
    }

    #[test]
    fn each_interface_is_unlocked_by_one_permission() {
        for row in &TABLE {
            for iface in row.interfaces {
                assert_eq!(
                    interface_need(iface),
                    InterfaceNeed::Permission(row.permission)
                );
            }
        }
        for iface in FREE_INTERFACES {
            assert_eq!(interface_need(iface), InterfaceNeed::Nothing);
        }
        assert_eq!(interface_need("sockets"), InterfaceNeed::Unknown);
    }

    #[test]
    fn a_scoped_row_has_a_manifest_list_or_names_skills() {
        for row in &TABLE {
            match row.scope {
                ScopeKind::Whole => assert!(row.manifest_list.is_none()),
                ScopeKind::SkillName => assert!(row.manifest_list.is_none()),
                _ => assert!(row.manifest_list.is_some(), "{}", row.permission),
            }
        }
    }
}
