//! Filter a block at a time gives every node the status the per-node pass gives it.
//!
//! The scheduler runs Filter over blocks of consecutive nodes
//! (`Framework::run_filter_plugins_block`): each plugin judges the whole block, plugins that
//! declare node traits (`FilterPlugin::needs_nodes_with`) see only nodes with one of them, and
//! NodeResourcesFit judges its block in one loop (`FilterPlugin::filter_nodes`). Random
//! clusters (cordoned and tainted nodes, full nodes, extended resources) and random pods
//! (tolerations, requests) check that each node's verdict and status equal those of every
//! active plugin's `filter` called on the node in order, with no shortcut.

use proptest::prelude::*;
use std::sync::Arc;
use tidegate_engine::Cache;
use tidegate_engine::Snapshot;
use tidegate_engine::api::{Node, Pod, PodSpecInfo, Resource, Sym, Taint, TaintEffect, Toleration};
use tidegate_engine::bench_support::BlockVerdicts;
use tidegate_engine::metrics::Metrics;
use tidegate_engine::{
    CycleState, FilterPlugin, Framework, NodeTraits, NoopClient, Profile, Status,
};
use tidegate_engine::{PluginContext, Registry};

const WIDGET: &str = "example.com/widget";

/// `(cordoned, taint: 0 none / 1 NoSchedule / 2 PreferNoSchedule, cpu, pods running, widgets)`.
type NodeSpec = (bool, u8, i64, u8, i64);

fn cluster(specs: &[NodeSpec]) -> Snapshot {
    let cache = Cache::new();
    for (i, &(cordoned, taint, cpu, running, widgets)) in specs.iter().enumerate() {
        let mut n = Node::named(&format!("node-{i}"));
        n.unschedulable = cordoned;
        let effect = match taint {
            1 => Some(TaintEffect::NoSchedule),
            2 => Some(TaintEffect::PreferNoSchedule),
            _ => None,
        };
        n.taints = effect
            .map(|effect| Taint {
                key: Sym::new("dedicated"),
                value: Sym::new("x"),
                effect,
            })
            .into_iter()
            .collect::<Vec<_>>()
            .into();
        n.allocatable = Resource {
            milli_cpu: cpu,
            memory: 8 << 30,
            allowed_pod_number: 3,
            ..Resource::default()
        };
        if widgets > 0 {
            n.allocatable.scalar = vec![(Sym::new(WIDGET), widgets)];
        }
        cache.add_node(Arc::new(n));
        for j in 0..running {
            let mut p = Pod::new(
                "ns",
                &format!("running-{i}-{j}"),
                Arc::new(PodSpecInfo {
                    requests: Resource {
                        milli_cpu: 500,
                        ..Resource::default()
                    },
                    ..PodSpecInfo::default()
                }),
            );
            p.node_name = Some(Sym::new(&format!("node-{i}")));
            cache.add_pod(Arc::new(p));
        }
    }
    let mut snap = Snapshot::default();
    cache.update_snapshot(&mut snap);
    snap
}

fn pod(cpu: i64, widgets: i64, tolerate_taint: bool, tolerate_cordon: bool) -> Pod {
    let mut tolerations = Vec::new();
    if tolerate_taint {
        tolerations.push(Toleration {
            key: Sym::new("dedicated"),
            exists: true,
            value: Sym::EMPTY,
            effect: None,
        });
    }
    if tolerate_cordon {
        tolerations.push(Toleration {
            key: Sym::new("node.kubernetes.io/unschedulable"),
            exists: true,
            value: Sym::EMPTY,
            effect: Some(TaintEffect::NoSchedule),
        });
    }
    let mut requests = Resource {
        milli_cpu: cpu,
        ..Resource::default()
    };
    if widgets > 0 {
        requests.scalar = vec![(Sym::new(WIDGET), widgets)];
    }
    Pod::new(
        "ns",
        "incoming",
        Arc::new(PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            non_zero_requests: requests.clone(),
            requests,
            tolerations,
            ..PodSpecInfo::default()
        }),
    )
}

fn framework() -> Framework {
    let ctx = PluginContext::new(
        Arc::new(NoopClient),
        Default::default(),
        None,
        Default::default(),
    );
    Framework::new(
        0,
        &Profile::default_profile(),
        &Registry::in_tree(),
        &ctx,
        Arc::new(Metrics::new()),
    )
    .unwrap()
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 128, ..ProptestConfig::default() })]
    #[test]
    fn block_verdicts_equal_each_plugins_filter_per_node(
        specs in proptest::collection::vec(
            (proptest::bool::weighted(0.2), 0u8..3, 0i64..3000, 0u8..4, 0i64..3),
            1..=64,
        ),
        cpu in 0i64..2000,
        widgets in 0i64..3,
        tolerate_taint in proptest::bool::ANY,
        tolerate_cordon in proptest::bool::ANY,
    ) {
        let snap = cluster(&specs);
        let fwk = framework();
        let p = pod(cpu, widgets, tolerate_taint, tolerate_cordon);
        let mut state = CycleState::new();
        let (_, st, _) = fwk.run_pre_filter(&mut state, &p, &snap);
        prop_assert!(st.is_success(), "PreFilter: {st:?}");
        let filters = fwk.active_filter_plugins(&state, &p);
        // The same plugins, each called on every node: no traits, no block loop.
        let plain: Vec<(&dyn FilterPlugin, NodeTraits)> =
            filters.iter().map(|&(pl, _)| (pl, NodeTraits::ANY)).collect();
        let mut v = BlockVerdicts::default();
        v.reset(snap.nodes.len());
        Framework::run_filter_plugins_block(&filters, &state, &p, &snap.nodes, &snap.rows, &mut v);
        let mut rejections = 0;
        for (o, n) in snap.nodes.iter().enumerate() {
            let want: Status = Framework::run_filter_plugins(&plain, &state, &p, n);
            prop_assert_eq!(v.pass[o], want.is_success(), "node {}", o);
            let got: Vec<&Status> =
                v.rejected.iter().filter(|(r, _)| *r == o).map(|(_, s)| s).collect();
            if want.is_success() {
                prop_assert!(got.is_empty(), "node {} passed but has a status", o);
            } else {
                rejections += 1;
                prop_assert_eq!(got, vec![&want], "node {}", o);
            }
        }
        prop_assert_eq!(v.rejected.len(), rejections);
    }
}
