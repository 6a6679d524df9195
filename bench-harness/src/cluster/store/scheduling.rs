//! The scheduling.k8s.io kinds (kube's `pkg/registry/scheduling/{priorityclass,podgroup,
//! workload,compositepodgroup}`): PriorityClass (stored and counted: the harness, like
//! upstream's, disables the Priority admission plugin, so a priorityClassName sets no
//! priority), and the pod-group kinds, stored as plain objects in the versions kube v1.37
//! serves (v1beta1 and v1alpha3; v1alpha3 only for CompositePodGroup). A pod joins a group
//! only through `spec.schedulingGroup`, which kube keeps only with the GenericWorkload gate
//! on, and a workload enabling that gate is unsupported: no gang plugin yet.

use crate::cluster::store::kind::{Kind, Version, check, decode};
use k8s_openapi::api::scheduling::{v1, v1alpha3, v1beta1};
use serde_json::Value;
use tidegate_engine::EventResource;

/// kube's pod-group policy rules: one of `basic` and `gang`, a gang of at least one pod.
fn validate_group(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::exactly_one(obj, "spec.schedulingPolicy", &["basic", "gang"], &mut errs);
    check::positive(obj, "spec.schedulingPolicy.gang.minCount", &mut errs);
    errs
}

/// The same rules for a composite group, whose gang counts child groups.
fn validate_composite(obj: &Value) -> Vec<(String, String)> {
    let mut errs = Vec::new();
    check::exactly_one(obj, "spec.schedulingPolicy", &["basic", "gang"], &mut errs);
    check::positive(obj, "spec.schedulingPolicy.gang.minGroupCount", &mut errs);
    errs
}

/// A scheduling.k8s.io kind.
const fn scheduling_kind(
    kind: &'static str,
    resource: &'static str,
    versions: &'static [Version],
    event: Option<EventResource>,
) -> Kind {
    Kind {
        kind,
        group: "scheduling.k8s.io",
        resource,
        versions,
        namespaced: true,
        status: false,
        immutable: &[],
        validate: check::nothing,
        needs_plugin: check::no_plugin,
        event,
        indexes: &[],
    }
}

pub static PRIORITY_CLASS: Kind = Kind {
    namespaced: false,
    immutable: &["value"],
    ..scheduling_kind(
        "PriorityClass",
        "priorityclasses.scheduling.k8s.io",
        &[Version {
            version: "v1",
            decode: decode::<v1::PriorityClass>,
        }],
        None,
    )
};

pub static POD_GROUP: Kind = Kind {
    status: true,
    immutable: &["spec"],
    validate: validate_group,
    ..scheduling_kind(
        "PodGroup",
        "podgroups.scheduling.k8s.io",
        &[
            Version {
                version: "v1beta1",
                decode: decode::<v1beta1::PodGroup>,
            },
            Version {
                version: "v1alpha3",
                decode: decode::<v1alpha3::PodGroup>,
            },
        ],
        Some(EventResource::PodGroup),
    )
};

pub static WORKLOAD: Kind = scheduling_kind(
    "Workload",
    "workloads.scheduling.k8s.io",
    &[
        Version {
            version: "v1beta1",
            decode: decode::<v1beta1::Workload>,
        },
        Version {
            version: "v1alpha3",
            decode: decode::<v1alpha3::Workload>,
        },
    ],
    Some(EventResource::Workload),
);

pub static COMPOSITE_POD_GROUP: Kind = Kind {
    status: true,
    immutable: &["spec"],
    validate: validate_composite,
    ..scheduling_kind(
        "CompositePodGroup",
        "compositepodgroups.scheduling.k8s.io",
        &[Version {
            version: "v1alpha3",
            decode: decode::<v1alpha3::CompositePodGroup>,
        }],
        Some(EventResource::CompositePodGroup),
    )
};
