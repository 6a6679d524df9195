//! The in-tree plugins and the registry that builds them by name.
//!
//! Each plugin lives in its own file, named after kube's plugin folder. The [`Registry`] maps a
//! plugin name to a factory, so plugins written outside the engine register the same way.

pub(crate) mod balanced_allocation;
pub(crate) mod default_binder;
pub(crate) mod default_preemption;
pub(crate) mod dynamic_resources;
pub(crate) mod gang_scheduling;
pub(crate) mod helper;
pub(crate) mod image_locality;
pub(crate) mod inter_pod_affinity;
pub(crate) mod kept;
pub(crate) mod node_affinity;
pub(crate) mod node_declared_features;
pub(crate) mod node_name;
pub(crate) mod node_ports;
pub(crate) mod node_resources_fit;
pub(crate) mod node_unschedulable;
pub(crate) mod node_volume_limits;
pub(crate) mod pod_group_preemption;
pub(crate) mod pod_topology_spread;
pub(crate) mod podgroup_pods_count;
pub(crate) mod priority_sort;
pub(crate) mod resource_allocation;
pub(crate) mod scheduling_gates;
pub(crate) mod taint_toleration;
pub(crate) mod topology_placement;
pub(crate) mod volume_binding;
pub(crate) mod volume_restrictions;
pub(crate) mod volume_zone;

use crate::framework::interface::Plugin;
use crate::framework::registry::{Registry, decode_args};
use std::sync::Arc;

impl Registry {
    /// The in-tree plugins of this build.
    pub fn in_tree() -> Registry {
        let mut r = Registry::default();
        r.register(scheduling_gates::NAME, |_| {
            Arc::new(scheduling_gates::SchedulingGates)
        });
        r.register(priority_sort::NAME, |_| {
            Arc::new(priority_sort::PrioritySort)
        });
        r.register(node_unschedulable::NAME, |_| {
            Arc::new(node_unschedulable::NodeUnschedulable::default())
        });
        r.register(node_name::NAME, |_| Arc::new(node_name::NodeName));
        r.register(node_declared_features::NAME, |ctx| {
            Arc::new(node_declared_features::NodeDeclaredFeatures::new(
                ctx.features.node_declared_features,
            ))
        });
        r.register(taint_toleration::NAME, |_| {
            Arc::new(taint_toleration::TaintToleration)
        });
        r.register_with_args(node_affinity::NAME, |_, args| {
            Ok(Arc::new(node_affinity::NodeAffinity::from_args(args)?))
        });
        r.register(node_ports::NAME, |_| Arc::new(node_ports::NodePorts));
        r.register_with_args(node_resources_fit::NAME, |ctx, args| {
            Ok(Arc::new(
                node_resources_fit::NodeResourcesFit::from_args(args)?.with_dra(ctx.dra.clone()),
            ))
        });
        r.register_with_args(pod_topology_spread::NAME, |ctx, args| {
            let args: pod_topology_spread::PodTopologySpreadArgs = decode_args(args)?;
            let pl = pod_topology_spread::PodTopologySpread::new(&args, Some(ctx.client.clone()))?;
            Ok(Arc::new(pl) as Arc<dyn Plugin>)
        });
        r.register_with_args(inter_pod_affinity::NAME, inter_pod_affinity::factory);
        r.register_with_args(balanced_allocation::NAME, |_, args| {
            Ok(Arc::new(
                balanced_allocation::BalancedAllocation::from_args(args)?,
            ))
        });
        r.register(image_locality::NAME, |_| {
            Arc::new(image_locality::ImageLocality)
        });
        r.register_with_args(default_preemption::NAME, |ctx, args| {
            let a: default_preemption::DefaultPreemptionArgs = decode_args(args)?;
            a.validate()?;
            Ok(Arc::new(
                default_preemption::DefaultPreemption::new(a, ctx.client.clone())
                    .with_pool(ctx.pool.clone())
                    .with_pod_groups(
                        ctx.features
                            .generic_workload
                            .then(|| ctx.waiting_pods.pod_groups().clone()),
                        ctx.features.pod_group_preemption_policy,
                    ),
            ))
        });
        r.register(dynamic_resources::plugin::NAME, |ctx| {
            let f = &ctx.features;
            Arc::new(
                dynamic_resources::plugin::DynamicResources::new(
                    ctx.dra.clone(),
                    ctx.client.clone(),
                    dynamic_resources::AllocatorFeatures::from_gates(f),
                )
                .with_pod_groups(
                    f.generic_workload
                        .then(|| ctx.waiting_pods.pod_groups().clone()),
                    f.dra_workload_resource_claims,
                    f.topology_aware_workload_scheduling,
                ),
            )
        });
        r.register(gang_scheduling::NAME, |ctx| {
            Arc::new(gang_scheduling::GangScheduling::new(
                ctx.waiting_pods.clone(),
            ))
        });
        r.register(topology_placement::NAME, |ctx| {
            Arc::new(topology_placement::TopologyPlacement::new(
                ctx.waiting_pods.pod_groups().clone(),
            ))
        });
        r.register(podgroup_pods_count::NAME, |ctx| {
            Arc::new(podgroup_pods_count::PodGroupPodsCount::new(
                ctx.waiting_pods.pod_groups().clone(),
            ))
        });
        r.register(volume_restrictions::NAME, |ctx| {
            Arc::new(volume_restrictions::VolumeRestrictions::new(
                ctx.volumes.clone(),
            ))
        });
        r.register(node_volume_limits::NAME, |ctx| {
            Arc::new(node_volume_limits::NodeVolumeLimits::new(
                ctx.volumes.clone(),
            ))
        });
        r.register(volume_binding::NAME, |ctx| {
            Arc::new(volume_binding::VolumeBinding::new(
                ctx.volumes.clone(),
                ctx.client.clone(),
            ))
        });
        r.register(volume_zone::NAME, |ctx| {
            Arc::new(volume_zone::VolumeZone::new(ctx.volumes.clone()))
        });
        r.register(default_binder::NAME, |ctx| {
            Arc::new(default_binder::DefaultBinder::new(ctx.client.clone()))
        });
        r
    }
}

/// kube's default plugins in MultiPoint order, with score weights, restricted to the plugins
/// this build has (`pkg/scheduler/apis/config/v1/default_plugins.go`), in kube's order. DynamicResources sits just before DefaultPreemption, where kube's
/// `applyDynamicResources` puts it (DRA is GA and locked on), so that its PostFilter frees an
/// idle claim before DefaultPreemption evicts pods.
pub(crate) const DEFAULT_PLUGINS: &[(&str, i64)] = &[
    (scheduling_gates::NAME, 0),
    (priority_sort::NAME, 0),
    (node_name::NAME, 0),
    (node_unschedulable::NAME, 0),
    (taint_toleration::NAME, 3),
    (node_affinity::NAME, 2),
    (node_ports::NAME, 0),
    (node_resources_fit::NAME, 1),
    (volume_restrictions::NAME, 0),
    (node_volume_limits::NAME, 0),
    (volume_binding::NAME, 1),
    (volume_zone::NAME, 0),
    (pod_topology_spread::NAME, 2),
    (inter_pod_affinity::NAME, 2),
    (dynamic_resources::plugin::NAME, 2),
    (default_preemption::NAME, 0),
    (balanced_allocation::NAME, 1),
    (image_locality::NAME, 1),
    (default_binder::NAME, 0),
];
