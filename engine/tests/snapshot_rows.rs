//! The snapshot's node table: after any sequence of cache changes and refreshes,
//! `rows[i] == NodeRow::of(&nodes[i])` for every node, so Filter and Score reading a row see
//! exactly what they would read in the NodeInfo.
//!
//! Random operations on a small cluster: nodes added, updated (cordoned, tainted, resized),
//! removed; pods bound, assumed, forgotten and deleted; the snapshot refreshed in between.

use proptest::prelude::*;
use std::sync::Arc;
use tidegate_engine::Cache;
use tidegate_engine::NodeRow;
use tidegate_engine::Snapshot;
use tidegate_engine::api::{Node, Pod, PodKey, PodSpecInfo, Resource, Sym, Taint, TaintEffect};

#[derive(Clone, Debug)]
enum Op {
    /// Add or update node `n` (cordoned, tainted, cpu, pods allowed, ephemeral storage).
    PutNode(u8, bool, bool, i64, i64, i64),
    RemoveNode(u8),
    /// Bind pod `p` (cpu, memory, ephemeral storage) to node `n`.
    AddPod(u8, u8, i64, i64, i64),
    /// Assume pod `p` on node `n`.
    Assume(u8, u8, i64),
    Forget(u8),
    RemovePod(u8),
    Refresh,
}

fn op() -> impl Strategy<Value = Op> {
    prop_oneof![
        (
            0u8..6,
            any::<bool>(),
            any::<bool>(),
            0i64..8000,
            0i64..4,
            0i64..4096
        )
            .prop_map(|(n, c, t, cpu, pods, eph)| Op::PutNode(n, c, t, cpu, pods, eph)),
        (0u8..6).prop_map(Op::RemoveNode),
        (0u8..20, 0u8..6, 0i64..2000, 0i64..(4 << 30), 0i64..1024)
            .prop_map(|(p, n, c, m, e)| Op::AddPod(p, n, c, m, e)),
        (0u8..20, 0u8..6, 0i64..2000).prop_map(|(p, n, c)| Op::Assume(p, n, c)),
        (0u8..20).prop_map(Op::Forget),
        (0u8..20).prop_map(Op::RemovePod),
        Just(Op::Refresh),
    ]
}

fn node_name(n: u8) -> String {
    format!("node-{n}")
}

fn pod(p: u8, n: u8, cpu: i64, memory: i64, eph: i64) -> Arc<Pod> {
    let mut pod = Pod::new(
        "ns",
        &format!("pod-{p}"),
        Arc::new(PodSpecInfo {
            requests: Resource {
                milli_cpu: cpu,
                memory,
                ephemeral_storage: eph,
                ..Resource::default()
            },
            non_zero_requests: Resource {
                milli_cpu: cpu.max(100),
                memory: memory.max(200 << 20),
                ..Resource::default()
            },
            ..PodSpecInfo::default()
        }),
    );
    pod.node_name = Some(Sym::new(&node_name(n)));
    Arc::new(pod)
}

fn check(snap: &Snapshot) -> Result<(), TestCaseError> {
    prop_assert_eq!(snap.rows.len(), snap.nodes.len());
    for (i, (row, ni)) in snap.rows.iter().zip(&snap.nodes).enumerate() {
        prop_assert_eq!(*row, NodeRow::of(ni), "row {} ({:?})", i, ni.name());
        prop_assert_eq!(row.has_taints(), ni.has_taints());
        prop_assert_eq!(
            row.free_pods > 0,
            ni.pod_count < ni.allocatable().allowed_pod_number
        );
    }
    Ok(())
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 256, ..ProptestConfig::default() })]

    #[test]
    fn every_row_is_its_node_infos_row(ops in proptest::collection::vec(op(), 1..60)) {
        let cache = Cache::new();
        let mut snap = Snapshot::default();
        let mut present = [false; 6];
        for op in ops {
            match op {
                Op::PutNode(n, cordoned, tainted, cpu, pods, eph) => {
                    let mut node = Node::named(&node_name(n));
                    node.unschedulable = cordoned;
                    if tainted {
                        node.taints = vec![Taint {
                            key: Sym::new("dedicated"),
                            value: Sym::new("x"),
                            effect: TaintEffect::NoSchedule,
                        }]
                        .into();
                    }
                    node.allocatable = Resource {
                        milli_cpu: cpu,
                        memory: 8 << 30,
                        ephemeral_storage: eph,
                        allowed_pod_number: pods,
                        ..Resource::default()
                    };
                    if present[n as usize] {
                        cache.update_node(Arc::new(node));
                    } else {
                        cache.add_node(Arc::new(node));
                        present[n as usize] = true;
                    }
                }
                Op::RemoveNode(n) => {
                    if present[n as usize] {
                        cache.remove_node(Sym::new(&node_name(n)));
                        present[n as usize] = false;
                    }
                }
                Op::AddPod(p, n, cpu, memory, eph) => {
                    let key = PodKey::new("ns", &format!("pod-{p}"));
                    cache.remove_pod(&key);
                    cache.add_pod(pod(p, n, cpu, memory, eph));
                }
                Op::Assume(p, n, cpu) => {
                    let key = PodKey::new("ns", &format!("pod-{p}"));
                    if !cache.is_assumed(&key) {
                        cache.remove_pod(&key);
                        cache.assume_pod(&pod(p, n, cpu, 0, 0), Sym::new(&node_name(n)));
                    }
                }
                Op::Forget(p) => cache.forget_pod(&PodKey::new("ns", &format!("pod-{p}"))),
                Op::RemovePod(p) => cache.remove_pod(&PodKey::new("ns", &format!("pod-{p}"))),
                Op::Refresh => {
                    cache.update_snapshot(&mut snap);
                    check(&snap)?;
                }
            }
        }
        cache.update_snapshot(&mut snap);
        check(&snap)?;
        prop_assert_eq!(snap.nodes.len(), present.iter().filter(|&&p| p).count());
    }
}
