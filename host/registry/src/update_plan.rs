//! The update plan: what a newer version of an installed skill asks for that the installed
//! one did not. The scopes are compared through the capability table
//! (`agent_manifest::capability`), so `https://API.example.com:443` and
//! `https://api.example.com` are one origin, while a new origin, program or variable is new.

use agent_manifest::{Permission, covers};

use crate::format::PermissionRef;

/// What an update adds to what a skill may do.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UpdatePlan {
    /// The permissions (one per scope) of the new version that no permission of the
    /// installed version covers, in the new version's order.
    pub added: Vec<PermissionRef>,
}

impl UpdatePlan {
    /// The plan from the `installed` version's permissions to the `candidate`'s.
    pub fn new(installed: &[PermissionRef], candidate: &[PermissionRef]) -> UpdatePlan {
        UpdatePlan {
            added: candidate
                .iter()
                .filter(|p| !installed.iter().any(|o| covered_by(o, p)))
                .cloned()
                .collect(),
        }
    }

    /// The added permissions `granted` does not grant (for example a run's `--allow`
    /// entries): what the user must still accept. `granted` is asked with the parsed
    /// permission and the scope; a permission this agent does not know is never granted.
    pub fn uncovered(
        &self,
        granted: impl Fn(Permission, Option<&str>) -> bool,
    ) -> Vec<PermissionRef> {
        self.added
            .iter()
            .filter(|p| {
                !p.permission
                    .parse::<Permission>()
                    .is_ok_and(|perm| granted(perm, p.scope.as_deref()))
            })
            .cloned()
            .collect()
    }
}

/// Whether the installed `old` already allowed everything `new` allows. A permission this
/// agent does not know is compared as written.
fn covered_by(old: &PermissionRef, new: &PermissionRef) -> bool {
    if old.permission != new.permission {
        return false;
    }
    match new.permission.parse::<Permission>() {
        Ok(p) => covers(p, old.scope.as_deref(), new.scope.as_deref()),
        Err(_) => old.scope == new.scope,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn p(permission: &str, scope: Option<&str>) -> PermissionRef {
        PermissionRef {
            permission: permission.into(),
            scope: scope.map(Into::into),
        }
    }

    #[test]
    fn added_permissions_compare_permission_and_scope() {
        let old = [p("shell:exec", Some("git"))];
        let new = [
            p("shell:exec", Some("git")),
            p("shell:exec", Some("curl")),
            p("file:read", None),
        ];
        assert_eq!(
            UpdatePlan::new(&old, &new).added,
            vec![p("shell:exec", Some("curl")), p("file:read", None)]
        );
    }

    #[test]
    fn the_same_origin_spelt_differently_is_not_new_and_a_new_origin_is() {
        let old = [
            p("net:fetch", Some("https://API.example.com:443")),
            p("net:fetch", Some("https://*.cdn.example")),
        ];
        let new = [
            p("net:fetch", Some("https://api.example.com")),
            p("net:fetch", Some("https://api.example.com.")),
            p("net:fetch", Some("https://eu.cdn.example")),
            p("net:fetch", Some("https://api.example.com:8443")),
            p("net:fetch", Some("http://api.example.com")),
            p("net:fetch", Some("https://new.example.com")),
            p("net:fetch", Some("https://\u{430}pi.example.com")),
        ];
        assert_eq!(
            UpdatePlan::new(&old, &new).added,
            vec![
                p("net:fetch", Some("https://api.example.com:8443")),
                p("net:fetch", Some("http://api.example.com")),
                p("net:fetch", Some("https://new.example.com")),
                p("net:fetch", Some("https://\u{430}pi.example.com")),
            ]
        );
    }

    #[test]
    fn a_whole_permission_covers_its_scopes_and_unknown_ones_compare_as_written() {
        let old = [p("shell:exec", None), p("acme:thing", Some("x"))];
        let new = [
            p("shell:exec", Some("git")),
            p("acme:thing", Some("x")),
            p("acme:thing", Some("y")),
        ];
        assert_eq!(
            UpdatePlan::new(&old, &new).added,
            vec![p("acme:thing", Some("y"))]
        );
    }

    #[test]
    fn what_a_grant_covers_is_not_left_to_accept() {
        let plan = UpdatePlan::new(
            &[],
            &[
                p("net:fetch", Some("https://API.example.com:443")),
                p("shell:exec", Some("git")),
                p("acme:thing", None),
            ],
        );
        let granted = |perm: Permission, scope: Option<&str>| {
            covers(perm, Some("https://api.example.com"), scope) && perm == Permission::NetFetch
        };
        assert_eq!(
            plan.uncovered(granted),
            vec![p("shell:exec", Some("git")), p("acme:thing", None)]
        );
    }
}
