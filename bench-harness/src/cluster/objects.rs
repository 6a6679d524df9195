//! Objects of any kind, as `createAny`, `updateAny` and `churn` create them (upstream uses the
//! dynamic client: any kind the API server knows). Each template is typed and converted once,
//! at plan time, so a bad template is reported before anything runs.
//!
//! What each kind does here:
//! - Pod, Node, Namespace: as the createPods / createNodes / createNamespaces ops store them
//!   (a Node from createAny gets no `kubernetes.io/hostname` label: only createNodes' node
//!   preparer adds it, as upstream).
//! - Every kind of the store's registry (`store::registry::KINDS`): decoded as its served
//!   version's type and validated with kube's field names, then stored through the generic
//!   shape. Services feed PodTopologySpread's system default constraints (kube's
//!   `helper.DefaultSelector`), PodDisruptionBudgets DefaultPreemption; the volume, DRA and
//!   pod-group kinds reach the scheduler's event handlers, where no plugin reads them yet (a pod
//!   that uses them is refused when converted; a DeviceClass backing an extended resource
//!   makes the workload unsupported); the rest (PriorityClass, ConfigMap, …) are stored and
//!   counted.
//! - The workload controllers whose selectors kube's default spreading also reads
//!   (ReplicaSet, StatefulSet, ReplicationController, …) are unsupported: the workload is
//!   skipped with the reason.
//!
//! [`Store::create_any`] stores a prepared object; it sits here, beside [`AnyObject`], so that
//! imports point one way: this file uses the store, the store does not use it.

use crate::cluster::store::kind::decode_rendered;
use crate::cluster::store::registry;
use crate::cluster::store::{KubeObject, Store, StoreError, StoredObject};
use crate::error::InputError;
use crate::workload::manifest::{self, Rendered};
use k8s_openapi::api::core::v1 as core;
use std::sync::Arc;
use tidegate_engine::api::{Node, PodSpecInfo};

/// A prepared object.
#[derive(Clone, Debug)]
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
    /// An object of a registered kind.
    Object(StoredObject),
}

impl AnyObject {
    pub fn kind(&self) -> &str {
        match self {
            AnyObject::Pod { .. } => "Pod",
            AnyObject::Node { .. } => "Node",
            AnyObject::Namespace(_) => "Namespace",
            AnyObject::Object(o) => o.kind.kind,
        }
    }

    /// Whether the kind lives in a namespace.
    pub fn namespaced(&self) -> bool {
        match self {
            AnyObject::Pod { .. } => true,
            AnyObject::Node { .. } | AnyObject::Namespace(_) => false,
            AnyObject::Object(o) => o.kind.namespaced,
        }
    }

    /// A typed object of a registered kind (a library user's, a test's).
    pub fn typed<T: crate::cluster::store::KubeType>(obj: T) -> Result<AnyObject, StoreError> {
        StoredObject::new(obj).map(AnyObject::Object)
    }

    /// The object of a registered kind, if it is one.
    pub fn object(&self) -> Option<&Arc<dyn KubeObject>> {
        match self {
            AnyObject::Object(o) => Some(&o.obj),
            _ => None,
        }
    }
}

/// Why a kind cannot be created here, or None when it can.
pub fn unsupported_kind(kind: &str) -> Option<String> {
    let why = match kind {
        "ReplicaSet"
        | "StatefulSet"
        | "ReplicationController"
        | "Deployment"
        | "DaemonSet"
        | "Job" => "workload controllers are not simulated",
        "Pod" | "Node" | "Namespace" => return None,
        k if registry::lookup(k).is_some() => return None,
        _ => "the kind is not known to this build",
    };
    Some(format!("objects of kind {kind} ({why})"))
}

/// Types and converts a rendered object. `Ok(Err(reason))`: a kind this build does not
/// create, or an object that needs a plugin tidegate lacks.
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
        _ => {
            let kind = registry::lookup(&kind).expect("unsupported_kind let only these through");
            let obj = decode_rendered(kind, r)?;
            if let Some(why) = (kind.needs_plugin)(&r.json) {
                return Ok(Err(why));
            }
            AnyObject::Object(StoredObject { kind, obj })
        }
    }))
}

impl Store {
    /// Creates an object of any supported kind (`createAny`, `churn`) in `namespace` (for
    /// namespaced kinds). Returns its name.
    pub fn create_any(&self, obj: &AnyObject, namespace: &str) -> Result<String, StoreError> {
        match obj {
            AnyObject::Pod { obj, spec } => self
                .create_pod(obj, namespace, spec.clone())
                .map(|k| k.split().1.to_string()),
            AnyObject::Node { obj, converted } => {
                self.create_node((**obj).clone(), (**converted).clone())
            }
            AnyObject::Namespace(ns) => self.create_namespace((**ns).clone()),
            AnyObject::Object(o) => self.create_object(o, namespace),
        }
    }
}
