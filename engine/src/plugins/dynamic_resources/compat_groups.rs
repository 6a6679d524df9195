//! DRADeviceCompatibilityGroups (kube v1.37.2
//! `k8s.io/dynamic-resource-allocation/structured/internal/experimental/compatibility_groups.go`):
//! devices drawing from one counter set may be allocated together only when their
//! `compatibilityGroups` share a group.
//!
//! Per pool and counter set the allocator keeps the **running intersection** of the groups
//! of every device on it: the allocated devices (the baseline, computed once per pool) and
//! those this search takes. A device declaring no groups goes only with others declaring
//! none, which a plain intersection cannot say (the empty set would refuse a second such
//! device), so that state is kept apart (`all_empty`).

use std::sync::Arc;

/// kube's `compatibilityGroupIntersection`; `Default` is "no device yet".
#[derive(Clone, Debug, Default, PartialEq)]
pub(crate) struct GroupIntersection {
    has_members: bool,
    /// Every device so far declared no groups.
    all_empty: bool,
    /// The intersection of the (non-empty) group lists so far.
    groups: Vec<Arc<str>>,
}

impl GroupIntersection {
    /// kube's `admits`: may a device declaring `groups` join?
    pub(crate) fn admits(&self, groups: &[Arc<str>]) -> bool {
        if !self.has_members {
            return true;
        }
        if groups.is_empty() {
            return self.all_empty;
        }
        !self.all_empty && self.groups.iter().any(|g| groups.contains(g))
    }

    /// kube's `add`: the intersection with a device declaring `groups` (admitted) joined.
    pub(crate) fn add(&self, groups: &[Arc<str>]) -> GroupIntersection {
        if !self.has_members {
            return GroupIntersection {
                has_members: true,
                all_empty: groups.is_empty(),
                groups: groups.to_vec(),
            };
        }
        if self.all_empty || groups.is_empty() {
            return self.clone();
        }
        GroupIntersection {
            has_members: true,
            all_empty: false,
            groups: (self.groups.iter())
                .filter(|g| groups.contains(g))
                .cloned()
                .collect(),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn g(v: &[&str]) -> Vec<Arc<str>> {
        v.iter().map(|s| Arc::from(*s)).collect()
    }

    /// kube's `TestCompatibilityGroupIntersectionAdmits` table, from
    /// staging/src/k8s.io/dynamic-resource-allocation/structured/internal/experimental/compatibility_groups_test.go.
    #[test]
    fn a_candidate_joins_when_its_groups_meet_the_intersection() {
        let none = GroupIntersection::default();
        for (name, members, candidate, want) in [
            (
                "empty-intersection-admits-grouped",
                None,
                &["mig"][..],
                true,
            ),
            ("empty-intersection-admits-nil", None, &[][..], true),
            (
                "no-group-members-admit-no-group-candidate",
                Some(&[][..]),
                &[][..],
                true,
            ),
            (
                "no-group-members-reject-grouped-candidate",
                Some(&[][..]),
                &["mig"][..],
                false,
            ),
            (
                "grouped-members-reject-no-group-candidate",
                Some(&["mig"][..]),
                &[][..],
                false,
            ),
            (
                "grouped-members-admit-overlapping-candidate",
                Some(&["mig"][..]),
                &["mig"][..],
                true,
            ),
            (
                "grouped-members-reject-disjoint-candidate",
                Some(&["mig"][..]),
                &["vgpu"][..],
                false,
            ),
            (
                "multi-group-candidate-overlaps",
                Some(&["foo", "foobar"][..]),
                &["bar", "foobar"][..],
                true,
            ),
            (
                "multi-group-candidate-disjoint",
                Some(&["foo", "foobar"][..]),
                &["baz"][..],
                false,
            ),
        ] {
            let i = members.map_or(none.clone(), |m| none.add(&g(m)));
            assert_eq!(i.admits(&g(candidate)), want, "{name}");
        }
    }

    /// kube's `TestCompatibilityGroupIntersectionRolling` and `...NoGroupsStacking` (same
    /// file).
    #[test]
    fn the_intersection_narrows_and_ungrouped_devices_stack() {
        let i = GroupIntersection::default().add(&g(&["foo", "foobar"]));
        assert!(i.admits(&g(&["bar", "foobar"])));
        let i = i.add(&g(&["bar", "foobar"]));
        assert_eq!(i.groups, g(&["foobar"]));
        assert!(!i.admits(&g(&["baz"])) && i.admits(&g(&["qux", "foobar"])));
        let mut none = GroupIntersection::default();
        for _ in 0..3 {
            assert!(none.admits(&[]));
            none = none.add(&[]);
        }
        assert!(!none.admits(&g(&["mig"])));
    }
}
