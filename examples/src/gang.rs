//! A gang plugin (coscheduling) on Permit.
//!
//! Pods name their group with the label [`GROUP_LABEL`] and its size with
//! [`MIN_AVAILABLE_LABEL`]. Protocol:
//! - **Permit**: a member joins its group's list of reserved members. While fewer than
//!   `min-available` are reserved it waits (Wait, with the plugin's timeout). The member that
//!   completes the group is permitted at once and allows every waiting member through the
//!   framework's waiting-pods map.
//! - **Unreserve** (the member was rejected, timed out, or failed later in its binding cycle):
//!   it leaves the group, and every other waiting member is rejected too: a gang runs whole or
//!   not at all. They come back through the queue with this plugin as their rejector.
//! - Pods without the label are not this plugin's business (Success).
//! - **Requeue** (EnqueueExtensions): a rejected member can only be helped by a new member of
//!   its group, so the plugin registers Pod/Add with a hint that queues a rejected pod only
//!   for a pod of the same group. (Without EnqueueExtensions kube, and tidegate, would move
//!   its rejected pods on every cluster event.)
//!
//! Lock discipline: the group map's lock is never held while allowing or rejecting, because a
//! rejection runs the member's binding-cycle failure path, which calls Unreserve here.

use ahash::AHashMap;
use parking_lot::Mutex;
use serde::Deserialize;
use std::sync::Arc;
use std::time::Duration;
use tidegate_engine::api::{Pod, PodKey, Sym};
use tidegate_engine::{ActionType, ClusterEvent, EventObject, EventResource, QueueingHint};
use tidegate_engine::{
    Code, CycleState, EnqueueExtensions, PermitPlugin, Plugin, ReservePlugin, Status, WaitingPods,
};
use tidegate_engine::{Registry, decode_args};

pub const NAME: &str = "Gang";
pub const GROUP_LABEL: &str = "gang.example.com/name";
pub const MIN_AVAILABLE_LABEL: &str = "gang.example.com/min-available";

/// `pluginConfig` args of the plugin.
#[derive(Clone, Debug, Deserialize, PartialEq, Eq)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct GangArgs {
    /// How long members wait at Permit for the rest of their group.
    pub permit_waiting_time_seconds: u64,
}

impl Default for GangArgs {
    fn default() -> Self {
        GangArgs {
            permit_waiting_time_seconds: 60,
        }
    }
}

/// (namespace, group name).
type GroupKey = (Sym, Sym);

pub struct Gang {
    waiting_pods: WaitingPods,
    timeout: Duration,
    /// (namespace, group) → members reserved and waiting.
    groups: Mutex<AHashMap<GroupKey, Vec<PodKey>>>,
}

impl Gang {
    pub fn new(args: GangArgs, waiting_pods: WaitingPods) -> Gang {
        Gang {
            waiting_pods,
            timeout: Duration::from_secs(args.permit_waiting_time_seconds),
            groups: Mutex::new(AHashMap::new()),
        }
    }

    /// The pod's group and size, if it has one. Err: a bad size label.
    fn group_of(pod: &Pod) -> Result<Option<(GroupKey, usize)>, Status> {
        let Some(name) = pod.labels.get(Sym::new(GROUP_LABEL)) else {
            return Ok(None);
        };
        let min = pod
            .labels
            .get(Sym::new(MIN_AVAILABLE_LABEL))
            .and_then(|v| v.to_string_lossy().parse::<usize>().ok())
            .filter(|&n| n >= 1)
            .ok_or_else(|| {
                Status::new(
                    Code::UnschedulableAndUnresolvable,
                    format!("label {MIN_AVAILABLE_LABEL} must be a positive integer"),
                )
            })?;
        Ok(Some(((pod.namespace, name), min)))
    }

    /// Members of the group that are waiting now (tests, tools).
    pub fn waiting_members(&self, namespace: &str, group: &str) -> usize {
        self.groups
            .lock()
            .get(&(Sym::new(namespace), Sym::new(group)))
            .map_or(0, |v| v.len())
    }
}

impl Plugin for Gang {
    fn name(&self) -> &'static str {
        NAME
    }
    fn into_permit(self: Arc<Self>) -> Option<Arc<dyn PermitPlugin>> {
        Some(self)
    }
    fn into_reserve(self: Arc<Self>) -> Option<Arc<dyn ReservePlugin>> {
        Some(self)
    }
    fn into_enqueue_extensions(self: Arc<Self>) -> Option<Arc<dyn EnqueueExtensions>> {
        Some(self)
    }
}

impl EnqueueExtensions for Gang {
    /// A new member may complete the group.
    fn events_to_register(&self) -> Vec<ClusterEvent> {
        vec![ClusterEvent::new(EventResource::Pod, ActionType::ADD)]
    }
    fn queueing_hint(
        &self,
        _event: &ClusterEvent,
        pod: &Pod,
        _old: &EventObject,
        new: &EventObject,
    ) -> Result<QueueingHint, String> {
        let same_group = |p: &Pod| match (Self::group_of(p), Self::group_of(pod)) {
            (Ok(Some((a, _))), Ok(Some((b, _)))) => a == b,
            _ => false,
        };
        Ok(match new.pod() {
            Some(p) if p.key != pod.key && same_group(p) => QueueingHint::Queue,
            _ => QueueingHint::QueueSkip,
        })
    }
}

impl PermitPlugin for Gang {
    fn permit(&self, _: &mut CycleState, pod: &Pod, _: Sym) -> (Status, Duration) {
        let (group, min) = match Self::group_of(pod) {
            Ok(Some(g)) => g,
            Ok(None) => return (Status::success(), Duration::ZERO),
            Err(s) => return (s, Duration::ZERO),
        };
        let release = {
            let mut groups = self.groups.lock();
            let members = groups.entry(group).or_default();
            if !members.contains(&pod.key) {
                members.push(pod.key.clone());
            }
            if members.len() < min {
                return (Status::code_only(Code::Wait), self.timeout);
            }
            groups.remove(&group).unwrap_or_default()
        };
        for k in release.iter().filter(|k| **k != pod.key) {
            if let Some(wp) = self.waiting_pods.get(k) {
                wp.allow(NAME);
            }
        }
        (Status::success(), Duration::ZERO)
    }
}

impl ReservePlugin for Gang {
    fn reserve(&self, _: &mut CycleState, _: &Pod, _: Sym) -> Status {
        Status::success()
    }

    fn unreserve(&self, _: &mut CycleState, pod: &Pod, _: Sym) {
        let Ok(Some((group, _))) = Self::group_of(pod) else {
            return;
        };
        let others = {
            let mut groups = self.groups.lock();
            let Some(members) = groups.get_mut(&group) else {
                return;
            };
            let had = members.len();
            members.retain(|k| *k != pod.key);
            if members.len() == had {
                return;
            }
            groups.remove(&group).unwrap_or_default()
        };
        let msg = format!("gang member {} was rejected", pod.key);
        for k in others {
            if let Some(wp) = self.waiting_pods.get(&k) {
                wp.reject(NAME, &msg);
            }
        }
    }
}

/// Registers [`Gang`] under [`NAME`], with its args from `pluginConfig`.
pub fn register(registry: &mut Registry) {
    registry.register_with_args(NAME, |ctx, args| {
        let a: GangArgs = decode_args(args)?;
        if a.permit_waiting_time_seconds == 0 {
            return Err("permitWaitingTimeSeconds: Invalid value: 0: must be positive".into());
        }
        Ok(Arc::new(Gang::new(a, ctx.waiting_pods.clone())))
    });
}
