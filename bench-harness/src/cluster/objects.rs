//! Objects of any kind, as `createAny` and `churn` create them (upstream uses the dynamic
//! client: any kind the API server knows). Each template is typed and converted once, at plan
//! time, so a bad template is reported before anything runs.
//!
//! What each kind does here:
//! - Pod, Node, Namespace: as the createPods / createNodes / createNamespaces ops store them
//!   (a Node from createAny gets no `kubernetes.io/hostname` label: only createNodes' node
//!   preparer adds it, as upstream).
//! - Service: its selector takes part in PodTopologySpread's system default constraints
//!   (kube's `helper.DefaultSelector`).
//! - PodDisruptionBudget (`policy/v1`): read by DefaultPreemption.
//! - PriorityClass, ConfigMap, Secret, ServiceAccount, LimitRange, ResourceQuota: stored and
//!   counted; nothing in the scheduler reads them (the harness, like upstream's, disables the
//!   Priority admission plugin, so a priorityClassName does not set a priority).
//! - Volume, DRA and pod-group kinds, and the workload controllers whose selectors kube's
//!   default spreading also reads (ReplicaSet, StatefulSet, ReplicationController), are
//!   unsupported: the workload is skipped with the reason.

use crate::error::InputError;
use crate::workload::manifest::{self, Rendered};
use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::policy::v1 as policy;
use std::sync::Arc;
use tidegate_engine::api::{Node, PodDisruptionBudget, PodSpecInfo, convert};

/// Kinds stored without effect on scheduling.
const INERT_KINDS: &[&str] = &[
    "PriorityClass",
    "ConfigMap",
    "Secret",
    "ServiceAccount",
    "LimitRange",
    "ResourceQuota",
];

/// A prepared object.
#[derive(Clone)]
pub enum AnyObject {
    Pod {
        obj: Arc<core::Pod>,
        spec: Arc<PodSpecInfo>,
    },
    Node {
        obj: Box<core::Node>,
        converted: Box<Node>,
    },
    Namespace(Box<core::Namespace>),
    Service(Box<core::Service>),
    Pdb(Box<policy::PodDisruptionBudget>),
    Inert {
        kind: String,
        name: Option<String>,
        generate_name: Option<String>,
    },
}

impl AnyObject {
    pub fn kind(&self) -> &str {
        match self {
            AnyObject::Pod { .. } => "Pod",
            AnyObject::Node { .. } => "Node",
            AnyObject::Namespace(_) => "Namespace",
            AnyObject::Service(_) => "Service",
            AnyObject::Pdb(_) => "PodDisruptionBudget",
            AnyObject::Inert { kind, .. } => kind,
        }
    }

    /// Whether the kind lives in a namespace.
    pub fn namespaced(&self) -> bool {
        !matches!(self, AnyObject::Node { .. } | AnyObject::Namespace(_))
            && !matches!(self, AnyObject::Inert { kind, .. } if kind == "PriorityClass")
    }
}

/// Why a kind cannot be created here, or None when it can.
pub fn unsupported_kind(kind: &str) -> Option<String> {
    let why = match kind {
        "PersistentVolume"
        | "PersistentVolumeClaim"
        | "StorageClass"
        | "CSINode"
        | "CSIDriver"
        | "CSIStorageCapacity"
        | "VolumeAttachment" => "volumes are out of scope",
        "ResourceClaim"
        | "ResourceClaimTemplate"
        | "DeviceClass"
        | "ResourceSlice"
        | "DeviceTaintRule" => "DRA is out of scope",
        "PodGroup" | "Workload" => "pod groups are out of scope",
        "ReplicaSet"
        | "StatefulSet"
        | "ReplicationController"
        | "Deployment"
        | "DaemonSet"
        | "Job" => "workload controllers are not simulated",
        "Pod" | "Node" | "Namespace" | "Service" | "PodDisruptionBudget" => return None,
        k if INERT_KINDS.contains(&k) => return None,
        _ => "the kind is not known to this build",
    };
    Some(format!("objects of kind {kind} ({why})"))
}

/// Types and converts a rendered object. `Ok(Err(reason))`: a kind this build does not
/// create.
pub fn prepare(r: &Rendered) -> Result<Result<AnyObject, String>, InputError> {
    let kind = r.kind().to_string();
    if let Some(why) = unsupported_kind(&kind) {
        return Ok(Err(why));
    }
    Ok(Ok(match kind.as_str() {
        "Pod" => {
            let pod: core::Pod = r.typed("Pod")?;
            let spec = manifest::pod_spec_info(Some(r), &pod)?;
            AnyObject::Pod {
                obj: Arc::new(pod),
                spec: Arc::new(spec),
            }
        }
        "Node" => {
            let n: core::Node = r.typed("Node")?;
            let converted = manifest::node(Some(r), &n)?;
            AnyObject::Node {
                obj: Box::new(n),
                converted: Box::new(converted),
            }
        }
        "Namespace" => AnyObject::Namespace(Box::new(r.typed("Namespace")?)),
        "Service" => AnyObject::Service(Box::new(r.typed("Service")?)),
        "PodDisruptionBudget" => {
            let pdb: policy::PodDisruptionBudget = r.typed("PodDisruptionBudget")?;
            convert::pod_disruption_budget(&pdb).map_err(|e| {
                r.error_at(
                    &e.field,
                    format!("Invalid value: {:?}: {}", e.value, e.detail),
                )
            })?;
            AnyObject::Pdb(Box::new(pdb))
        }
        _ => {
            let meta = r.json.get("metadata");
            let text = |k: &str| {
                meta.and_then(|m| m.get(k))
                    .and_then(|v| v.as_str())
                    .map(str::to_string)
            };
            AnyObject::Inert {
                kind,
                name: text("name"),
                generate_name: text("generateName"),
            }
        }
    }))
}

/// The converted PDB of a stored `policy/v1` object (namespace and name set).
pub fn pdb(obj: &policy::PodDisruptionBudget) -> Option<PodDisruptionBudget> {
    convert::pod_disruption_budget(obj).ok()
}
