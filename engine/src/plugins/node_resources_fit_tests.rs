use super::*;

#[test]
fn hints_requeue_only_when_the_event_can_help() {
    use crate::api::{Node, PodSpecInfo, Sym};
    use std::sync::Arc;
    let with = |cpu: i64, mem: i64| PodSpecInfo {
        requests: Resource {
            milli_cpu: cpu,
            memory: mem,
            ..Default::default()
        },
        ..Default::default()
    };
    let pending = Pod::new("ns", "p", Arc::new(with(2000, 0)));
    let bound = |name: &str, spec: PodSpecInfo| {
        let mut p = Pod::new("ns", name, Arc::new(spec));
        p.node_name = Some(Sym::new("n"));
        Arc::new(p)
    };
    let f = NodeResourcesFit::default();
    let h = |ev, old: &EventObject, new: &EventObject| {
        f.queueing_hint(&ev, &pending, old, new).unwrap()
    };
    // Any bound pod's delete frees at least a pod slot; a never-bound one frees nothing.
    let del = ClusterEvent::new(EventResource::AssignedPod, ActionType::DELETE);
    let gone_mem = EventObject::Pod(bound("m", with(0, 1 << 30)));
    assert_eq!(h(del, &gone_mem, &EventObject::None), QueueingHint::Queue);
    let never_ran = EventObject::Pod(Arc::new(Pod::new("ns", "u", Arc::new(with(500, 0)))));
    assert_eq!(
        h(del, &never_ran, &EventObject::None),
        QueueingHint::QueueSkip
    );
    // A scale-down helps only if it frees something the pod asks for.
    let down = ClusterEvent::new(
        EventResource::AssignedPod,
        ActionType::UPDATE_POD_SCALE_DOWN,
    );
    let before = EventObject::Pod(bound("s", with(1000, 1 << 30)));
    let less_mem = EventObject::Pod(bound("s", with(1000, 1 << 20)));
    let less_cpu = EventObject::Pod(bound("s", with(200, 1 << 30)));
    assert_eq!(h(down, &before, &less_mem), QueueingHint::QueueSkip);
    assert_eq!(h(down, &before, &less_cpu), QueueingHint::Queue);
    // provenance: pkg/scheduler/framework/plugins/noderesources/fit_test.go
    // (TestIsSchedulableAfterPodChange, the InPlacePodVerticalScaling cases): what the
    // node counted is compared, status resources included. A spec scale-down the kubelet
    // has not actuated (allocated still 1000m) frees nothing.
    let unactuated = {
        let mut p = (*bound("s", with(200, 1 << 30))).clone();
        let held = Resource {
            milli_cpu: 1000,
            memory: 1 << 30,
            ..Default::default()
        };
        p.resize = Some(Arc::new(crate::api::PodResize {
            pending: None,
            requests: held.clone(),
            non_zero_requests: held,
        }));
        EventObject::Pod(Arc::new(p))
    };
    assert_eq!(h(down, &before, &unactuated), QueueingHint::QueueSkip);
    assert_eq!(h(down, &unactuated, &less_cpu), QueueingHint::Queue);
    // provenance: pkg/scheduler/framework/plugins/noderesources/fit_test.go (the
    // deferred-resize cases of TestIsSchedulableAfterPodChange / ...NodeChange /
    // ...ScaleUp): a deferred pod waits on its own node only; scale-ups concern only
    // deferred pods.
    let mut parked = Pod::new("ns", "d", Arc::new(with(2000, 0)));
    parked.node_name = Some(Sym::new("n"));
    parked.resize = Some(Arc::new(crate::api::PodResize {
        pending: Some(crate::api::ResizePending::Deferred),
        requests: with(2000, 0).requests,
        non_zero_requests: with(2000, 0).requests,
    }));
    let hd =
        |ev, old: &EventObject, new: &EventObject| f.queueing_hint(&ev, &parked, old, new).unwrap();
    let other_node = |name: &str| {
        let mut p = (*bound(name, with(1000, 0))).clone();
        p.node_name = Some(Sym::new("m"));
        EventObject::Pod(Arc::new(p))
    };
    assert_eq!(hd(del, &gone_mem, &EventObject::None), QueueingHint::Queue);
    assert_eq!(
        hd(del, &other_node("x"), &EventObject::None),
        QueueingHint::QueueSkip
    );
    let up = ClusterEvent::new(EventResource::AssignedPod, ActionType::UPDATE_POD_SCALE_UP);
    assert_eq!(hd(up, &before, &before), QueueingHint::Queue);
    assert_eq!(hd(up, &before, &other_node("y")), QueueingHint::QueueSkip);
    assert_eq!(h(up, &before, &before), QueueingHint::QueueSkip);
    let node = |cpu: i64| {
        EventObject::Node(Arc::new(Node {
            name: Sym::new("n"),
            labels: Arc::default(),
            taints: Arc::new([]),
            unschedulable: false,
            allocatable: Resource {
                milli_cpu: cpu,
                memory: 8 << 30,
                allowed_pod_number: 110,
                ..Default::default()
            },
            ..Default::default()
        }))
    };
    let add = ClusterEvent::new(EventResource::Node, ActionType::ADD);
    assert_eq!(h(add, &EventObject::None, &node(4000)), QueueingHint::Queue);
    assert_eq!(
        h(add, &EventObject::None, &node(1000)),
        QueueingHint::QueueSkip
    );
}

use crate::plugins::resource_allocation::test_util::{node, node_infos, pod};

fn fit(json: serde_json::Value) -> Result<NodeResourcesFit, String> {
    NodeResourcesFit::from_args(Some(&json))
}

fn scores(
    f: &NodeResourcesFit,
    p: &Pod,
    nodes: &[Arc<crate::api::Node>],
    existing: &[Arc<Pod>],
) -> Vec<i64> {
    let state = CycleState::new();
    let infos = node_infos(nodes, existing);
    let one_by_one: Vec<i64> = infos
        .iter()
        .map(|ni| f.score(&state, p, ni).unwrap())
        .collect();
    // The batch the scheduler calls gives the same scores.
    let refs: Vec<&NodeInfo> = infos.iter().collect();
    let mut batch = vec![-1; refs.len()];
    let rows: Vec<NodeRow> = infos.iter().map(NodeRow::of).collect();
    f.score_nodes(&state, p, &refs, &rows, &mut batch).unwrap();
    assert_eq!(batch, one_by_one, "score_nodes vs score");
    batch
}

const EXT: &str = "abc.com/xyz";

// Provenance: kubernetes/kubernetes
// pkg/scheduler/framework/plugins/noderesources/most_allocated_test.go
// (TestMostAllocatedScoringStrategy).
#[test]
fn most_allocated_table() {
    let most = |resources: serde_json::Value| {
        fit(
            serde_json::json!({"scoringStrategy": {"type": "MostAllocated", "resources": resources}}),
        )
    };
    let default = most(serde_json::json!([])).unwrap();
    let n = |name, cpu, mem| node(name, &[("cpu", cpu), ("memory", mem)]);
    let small_big = [n("node1", "4000", "10000"), n("node2", "6000", "10000")];
    let req2 = pod(
        "p",
        None,
        &[
            &[("cpu", "1000"), ("memory", "2000")],
            &[("cpu", "2000"), ("memory", "3000")],
        ],
    );
    // Nothing scheduled, nothing requested.
    let empty = pod("p", None, &[]);
    let same = [n("node1", "4000", "10000"), n("node2", "4000", "10000")];
    assert_eq!(scores(&default, &empty, &same, &[]), [0, 0]);
    // Differently sized nodes: (75 + 50) / 2 and (50 + 50) / 2.
    assert_eq!(scores(&default, &req2, &small_big, &[]), [62, 50]);
    // No resources requested, pods scheduled with resources.
    let big = [n("node1", "10000", "20000"), n("node2", "10000", "20000")];
    let on = |name: &str, node: &str, cpu: &str, mem: &str| {
        pod(name, Some(node), &[&[("cpu", cpu), ("memory", mem)]])
    };
    let existing = [
        on("e1", "node1", "3000", "0"),
        on("e2", "node1", "3000", "0"),
        on("e3", "node2", "3000", "0"),
        on("e4", "node2", "3000", "5000"),
    ];
    assert_eq!(scores(&default, &empty, &big, &existing), [30, 42]);
    // Resources requested, pods scheduled with resources.
    let existing = [
        on("e1", "node1", "3000", "0"),
        on("e2", "node2", "3000", "5000"),
    ];
    assert_eq!(scores(&default, &req2, &big, &existing), [42, 55]);
    // Requests equal to the node's capacity.
    let eq = pod(
        "p",
        None,
        &[
            &[("cpu", "2000"), ("memory", "4000")],
            &[("cpu", "3000"), ("memory", "5000")],
        ],
    );
    let nodes = [n("node1", "5000", "10000"), n("node2", "10000", "9000")];
    assert_eq!(scores(&default, &eq, &nodes, &[]), [95, 75]);
    // Weighted: memory 2, cpu 1.
    let weighted = most(serde_json::json!([
        {"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}
    ]))
    .unwrap();
    assert_eq!(scores(&weighted, &req2, &small_big, &[]), [58, 50]);
    // Containers without requests count the non-zero defaults (100m, 200Mi), capped.
    let nz = [n("node1", "250m", "1000Mi"), n("node2", "250m", "1000Mi")];
    let bare = pod("p", None, &[&[]]);
    let existing = [
        pod("e1", Some("node1"), &[&[]]),
        pod("e2", Some("node1"), &[&[]]),
    ];
    assert_eq!(scores(&default, &bare, &nz, &existing), [80, 30]);
    // Invalid weights.
    assert_eq!(
        most(serde_json::json!([{"name": "memory", "weight": -1}, {"name": "cpu", "weight": 1}]))
            .unwrap_err(),
        "scoringStrategy.resources[0].weight: Invalid value: -1: resource weight of memory not in valid range (0, 100]"
    );
    assert_eq!(
        most(serde_json::json!([{"name": "memory", "weight": 101}])).unwrap_err(),
        "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of memory not in valid range (0, 100]"
    );
    // Extended resources: bypassed when the pod does not request them.
    let ext_set = most(serde_json::json!([
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}, {"name": EXT, "weight": 1}
    ]))
    .unwrap();
    let nodes = [
        node("node1", &[("cpu", "6000"), ("memory", "10000")]),
        node("node2", &[("cpu", "6000"), ("memory", "10000"), (EXT, "4")]),
    ];
    assert_eq!(scores(&ext_set, &req2, &nodes, &[]), [50, 50]);
    // ...and honoured when it does: (50 + 50 + 2/4) / 3 and (50 + 50 + 2/10) / 3.
    let ext_pod = pod(
        "p",
        None,
        &[&[("cpu", "3000"), ("memory", "5000"), (EXT, "2")]],
    );
    let nodes = [
        node("node1", &[("cpu", "6000"), ("memory", "10000"), (EXT, "4")]),
        node(
            "node2",
            &[("cpu", "6000"), ("memory", "10000"), (EXT, "10")],
        ),
    ];
    assert_eq!(scores(&ext_set, &ext_pod, &nodes, &[]), [50, 40]);
    // A node without the resource: only cpu and memory count.
    let ext_weighted = most(serde_json::json!([
        {"name": EXT, "weight": 2}, {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}
    ]))
    .unwrap();
    let p34 = pod("p", None, &[&[("cpu", "3000"), ("memory", "4000")]]);
    let nodes = [
        node("node1", &[("cpu", "6000"), ("memory", "10000")]),
        node("node2", &[("cpu", "6000"), ("memory", "10000"), (EXT, "4")]),
    ];
    assert_eq!(scores(&ext_weighted, &p34, &nodes, &[]), [45, 45]);
}

// After kubernetes/kubernetes
// pkg/scheduler/framework/plugins/noderesources/least_allocated_test.go
// (TestLeastAllocatedScoringStrategy): the same fixtures scored the other way round.
#[test]
fn least_allocated_table() {
    let default = NodeResourcesFit::default();
    let n = |name, cpu, mem| node(name, &[("cpu", cpu), ("memory", mem)]);
    let empty = pod("p", None, &[]);
    let same = [n("node1", "4000", "10000"), n("node2", "4000", "10000")];
    assert_eq!(scores(&default, &empty, &same, &[]), [100, 100]);
    let req2 = pod(
        "p",
        None,
        &[
            &[("cpu", "1000"), ("memory", "2000")],
            &[("cpu", "2000"), ("memory", "3000")],
        ],
    );
    // (25 + 50) / 2 and (50 + 50) / 2.
    let small_big = [n("node1", "4000", "10000"), n("node2", "6000", "10000")];
    assert_eq!(scores(&default, &req2, &small_big, &[]), [37, 50]);
    // Requests over capacity score 0 for that resource.
    let nodes = [n("node1", "2000", "10000"), n("node2", "4000", "10000")];
    assert_eq!(scores(&default, &req2, &nodes, &[]), [25, 37]);
    // Weighted: memory 2, cpu 1: (25 + 50 × 2) / 3 = 41.
    let w = fit(
        serde_json::json!({"scoringStrategy": {"type": "LeastAllocated", "resources": [
            {"name": "memory", "weight": 2}, {"name": "cpu", "weight": 1}
        ]}}),
    )
    .unwrap();
    assert_eq!(scores(&w, &req2, &small_big, &[]), [41, 50]);
    // Non-zero defaults: 3 × 100m of 250m, 3 × 200Mi of 1000Mi -> (0 + 40) / 2.
    let nz = [n("node1", "250m", "1000Mi"), n("node2", "250m", "1000Mi")];
    let bare = pod("p", None, &[&[]]);
    let existing = [
        pod("e1", Some("node1"), &[&[]]),
        pod("e2", Some("node1"), &[&[]]),
    ];
    assert_eq!(scores(&default, &bare, &nz, &existing), [20, 70]);
}

// Provenance: kubernetes/kubernetes
// pkg/scheduler/framework/plugins/noderesources/requested_to_capacity_ratio_test.go
// (TestRequestedToCapacityRatioScoringStrategy, TestResourceBinPackingSingleExtended).
#[test]
fn requested_to_capacity_ratio_table() {
    let rtcr = fit(serde_json::json!({"scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}],
        "requestedToCapacityRatio": {"shape": [
            {"utilization": 0, "score": 10}, {"utilization": 100, "score": 0}
        ]}
    }}))
    .unwrap();
    let n = |name, cpu, mem| node(name, &[("cpu", cpu), ("memory", mem)]);
    let same = [n("node1", "4000", "10000"), n("node2", "4000", "10000")];
    let bare_on = |name: &str| pod(name, Some("node1"), &[]);
    let empty = pod("p", None, &[]);
    assert_eq!(
        scores(&rtcr, &empty, &same, &[bare_on("e1"), bare_on("e2")]),
        [100, 100]
    );
    let req2 = pod(
        "p",
        None,
        &[
            &[("cpu", "1000"), ("memory", "2000")],
            &[("cpu", "2000"), ("memory", "3000")],
        ],
    );
    let small_big = [n("node1", "4000", "10000"), n("node2", "6000", "10000")];
    // round((25 + 50) / 2) = 38.
    assert_eq!(
        scores(&rtcr, &req2, &small_big, &[bare_on("e1"), bare_on("e2")]),
        [38, 50]
    );
    let existing = [
        pod(
            "e1",
            Some("node1"),
            &[&[("cpu", "3000"), ("memory", "5000")]],
        ),
        pod(
            "e2",
            Some("node2"),
            &[&[("cpu", "3000"), ("memory", "5000")]],
        ),
    ];
    assert_eq!(scores(&rtcr, &empty, &small_big, &existing), [38, 50]);

    // Bin packing on one extended resource, shape (0, 0) -> (100, 1).
    let foo = "intel.com/foo";
    let bin = fit(serde_json::json!({"scoringStrategy": {
        "type": "RequestedToCapacityRatio",
        "resources": [{"name": foo, "weight": 1}],
        "requestedToCapacityRatio": {"shape": [
            {"utilization": 0, "score": 0}, {"utilization": 100, "score": 1}
        ]}
    }}))
    .unwrap();
    let nodes = [
        node("node1", &[("cpu", "4"), ("memory", "10000Mi"), (foo, "8")]),
        node("node2", &[("cpu", "4"), ("memory", "10000Mi"), (foo, "4")]),
    ];
    assert_eq!(scores(&bin, &empty, &nodes, &[]), [0, 0]);
    let two = pod("p", None, &[&[(foo, "2")]]);
    assert_eq!(scores(&bin, &two, &nodes, &[]), [2, 5]);
    let on2 = [pod("e", Some("node2"), &[&[(foo, "2")]])];
    assert_eq!(scores(&bin, &two, &nodes, &on2), [2, 10]);
    let four = pod("p", None, &[&[(foo, "4")]]);
    assert_eq!(scores(&bin, &four, &nodes, &[]), [5, 10]);
}

// Provenance: kubernetes/kubernetes
// pkg/scheduler/apis/config/validation/validation_pluginargs_test.go
// (TestValidateFitArgs) and v1/defaults_test.go (NodeResourcesFitArgs).
#[test]
fn args_defaults_and_validation() {
    let mut a: NodeResourcesFitArgs = crate::framework::registry::decode_args(None).unwrap();
    a.set_defaults();
    let s = a.scoring_strategy.as_ref().unwrap();
    assert_eq!(s.type_, "LeastAllocated");
    assert_eq!(s.resources, default_resources());
    let mut a: NodeResourcesFitArgs =
        crate::framework::registry::decode_args(Some(&serde_json::json!({
            "scoringStrategy": {"type": "MostAllocated", "resources": [{"name": "cpu"}]}
        })))
        .unwrap();
    a.set_defaults();
    assert_eq!(
        a.scoring_strategy.unwrap().resources,
        [ResourceSpec::new("cpu", 1)]
    );
    let e = |j| fit(j).unwrap_err();
    assert_eq!(
        e(serde_json::json!({"ignoredResources": ["example.com/foo", "!@#"]})),
        "ignoredResources[1]: Invalid value: \"!@#\": name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')"
    );
    assert_eq!(
        e(serde_json::json!({"ignoredResourceGroups": ["example.com/foo"]})),
        "ignoredResourceGroups[0]: Invalid value: \"example.com/foo\": resource group name can't contain '/'"
    );
    assert_eq!(
        e(serde_json::json!({"scoringStrategy": {"type": "Invalid"}})),
        "scoringStrategy.type: Unsupported value: \"Invalid\": supported values: \"LeastAllocated\", \"MostAllocated\", \"RequestedToCapacityRatio\""
    );
    assert_eq!(
        e(serde_json::json!({"scoringStrategy": {
            "type": "RequestedToCapacityRatio",
            "requestedToCapacityRatio": {"shape": [
                {"utilization": 50, "score": 5}, {"utilization": 10, "score": 11}
            ]}
        }})),
        "[scoringStrategy.shape[1].utilization: Invalid value: 10: values must be sorted in increasing order, \
         scoringStrategy.shape[1].score: Invalid value: 11: not in valid range [0, 10]]"
    );
    assert!(e(serde_json::json!({"unknown": 1})).contains("unknown field"));
}

// After kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit_test.go
// (TestEnoughRequests: "skip checking ignored extended resource" and the resource-group
// cases).
#[test]
fn ignored_extended_resources_in_filter() {
    let nodes = [node(
        "n",
        &[
            ("cpu", "10"),
            ("memory", "20"),
            ("pods", "32"),
            ("example.com/aaa", "5"),
        ],
    )];
    let ni = &node_infos(&nodes, &[])[0];
    let state = CycleState::new();
    let wants = |f: &NodeResourcesFit, reqs: &[(&str, &str)]| {
        let p = pod("p", None, &[reqs]);
        f.filter(&state, &p, ni).reasons().to_vec()
    };
    let plain = NodeResourcesFit::default();
    assert_eq!(
        wants(&plain, &[("cpu", "1"), ("example.com/aaa", "10")]),
        ["Insufficient example.com/aaa"]
    );
    assert_eq!(
        wants(&plain, &[("cpu", "1"), ("example.com/bbb", "1")]),
        ["Insufficient example.com/bbb"]
    );
    let by_name = fit(serde_json::json!({"ignoredResources": ["example.com/bbb"]})).unwrap();
    assert!(wants(&by_name, &[("cpu", "1"), ("example.com/bbb", "1")]).is_empty());
    assert_eq!(
        wants(&by_name, &[("cpu", "1"), ("example.com/aaa", "10")]),
        ["Insufficient example.com/aaa"]
    );
    let by_group = fit(serde_json::json!({"ignoredResourceGroups": ["example.com"]})).unwrap();
    assert!(wants(&by_group, &[("cpu", "1"), ("example.com/aaa", "10")]).is_empty());
    // Native resources are never ignored.
    let native = fit(serde_json::json!({"ignoredResources": ["hugepages-2Mi"]})).unwrap();
    assert_eq!(
        wants(&native, &[("hugepages-2Mi", "1")]),
        ["Insufficient hugepages-2Mi"]
    );
    // cpu and memory are still checked.
    assert_eq!(
        wants(&by_group, &[("cpu", "11"), ("memory", "30")]),
        ["Insufficient cpu", "Insufficient memory"]
    );
}

// Provenance: kubernetes/kubernetes
// pkg/scheduler/framework/plugins/noderesources/fit_test.go (TestScorePlacement_Resources,
// v1.37.2): MostAllocated over the placement's nodes taken as one, whatever the Score
// strategy; nodes outside the placement do not count, pods already on its nodes do, and an
// extended resource counts only when a member asks for it.
#[test]
fn score_placement_resources_table() {
    let cm = |c: &'static str, m: &'static str| vec![("cpu", c), ("memory", m)];
    let cmg = |c: &'static str, m: &'static str, g: &'static str| {
        vec![("cpu", c), ("memory", m), ("nvidia.com/gpu", g)]
    };
    type Reqs = Vec<(&'static str, &'static str)>;
    struct Case {
        name: &'static str,
        capacity: Reqs,
        nodes: usize,
        members: Vec<(Reqs, &'static str)>,
        existing: Vec<(Reqs, &'static str)>,
        resources: serde_json::Value,
        want: i64,
    }
    let cpu_mem =
        serde_json::json!([{"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1}]);
    let weighted =
        serde_json::json!([{"name": "cpu", "weight": 4}, {"name": "memory", "weight": 1}]);
    let with_gpu = serde_json::json!([
        {"name": "cpu", "weight": 1}, {"name": "memory", "weight": 1},
        {"name": "nvidia.com/gpu", "weight": 1}
    ]);
    let two = || vec![(cm("1000m", "0"), "node1"), (cm("2000m", "2000"), "node2")];
    let cases = vec![
        Case {
            name: "Computes score based on total requests",
            capacity: cm("5000m", "5000"),
            nodes: 2,
            members: two(),
            existing: vec![],
            resources: cpu_mem.clone(),
            want: 25,
        },
        Case {
            name: "Computes score using weights",
            capacity: cm("5000m", "5000"),
            nodes: 2,
            members: two(),
            existing: vec![],
            resources: weighted.clone(),
            want: 28,
        },
        Case {
            name: "Handles multiple pods per node",
            capacity: cm("5000m", "5000"),
            nodes: 2,
            members: vec![(cm("1000m", "0"), "node1"), (cm("2000m", "2000"), "node1")],
            existing: vec![],
            resources: weighted,
            want: 28,
        },
        Case {
            name: "Does not include nodes from outside of placement",
            capacity: cm("5000m", "5000"),
            nodes: 3,
            members: two(),
            existing: vec![],
            resources: cpu_mem.clone(),
            want: 25,
        },
        Case {
            name: "Includes pre-existing pods from outside of pod group",
            capacity: cm("5000m", "5000"),
            nodes: 2,
            members: two(),
            existing: vec![(cm("1000m", "0"), "node1")],
            resources: cpu_mem,
            want: 30,
        },
        Case {
            name: "Includes scalar resources if any pod in pod group has nonzero requests",
            capacity: cmg("5000m", "5000", "5"),
            nodes: 2,
            members: vec![
                (cmg("1000m", "0", "0"), "node1"),
                (cmg("1000m", "2000", "1"), "node2"),
            ],
            existing: vec![(cmg("1000m", "0", "0"), "node1")],
            resources: with_gpu.clone(),
            want: 20,
        },
        Case {
            name: "Does not include scalar resources if all pods in pod group have zero requests",
            capacity: cmg("5000m", "5000", "5"),
            nodes: 2,
            members: vec![
                (cmg("1000m", "0", "0"), "node1"),
                (cmg("1000m", "2000", "0"), "node2"),
            ],
            existing: vec![(cmg("1000m", "0", "1"), "node1")],
            resources: with_gpu,
            want: 25,
        },
    ];
    for c in cases {
        let score = placement_score(c.resources, &c.capacity, c.nodes, &c.members, &c.existing);
        assert_eq!(score, c.want, "{}", c.name);
    }
}

/// Fit's ScorePlacement (its Score strategy LeastAllocated: placements are scored
/// MostAllocated anyway) for `members` (requests, node) on a placement of node1 and node2 of
/// `nodes` nodes of `capacity`, `existing` pods (requests, node) already there.
fn placement_score(
    resources: serde_json::Value,
    capacity: &[(&str, &str)],
    nodes: usize,
    members: &[(Vec<(&str, &str)>, &str)],
    existing: &[(Vec<(&str, &str)>, &str)],
) -> i64 {
    use crate::api::PodGroupKey;
    use crate::framework::pod_group::{Placement, ProposedAssignment};
    let f = fit(serde_json::json!({"scoringStrategy": {
        "type": "LeastAllocated", "resources": resources}}))
    .unwrap();
    let nodes: Vec<_> = (1..=nodes)
        .map(|i| node(&format!("node{i}"), capacity))
        .collect();
    let existing: Vec<Arc<Pod>> = existing
        .iter()
        .enumerate()
        .map(|(i, (r, n))| pod(&format!("baz{i}"), Some(n), &[&r[..]]))
        .collect();
    let placement = Arc::new(Placement {
        name: "p".into(),
        nodes: node_infos(&nodes[..2], &existing)
            .into_iter()
            .map(Arc::new)
            .collect(),
    });
    let proposed = members
        .iter()
        .enumerate()
        .map(|(i, (r, n))| ProposedAssignment {
            pod: pod(&format!("m{i}"), None, &[&r[..]]),
            node_name: Sym::new(n),
            cycle_state: Arc::new(CycleState::new()),
        })
        .collect();
    let assignments = PodGroupAssignments {
        placement: Some(placement),
        proposed_assignments: proposed,
    };
    let info = PodGroupInfo::new(PodGroupKey::new("default", "pg"), None);
    let (score, st) =
        f.score_placement(&CycleState::new(), &CycleState::new(), &info, &assignments);
    assert!(st.is_success());
    score
}
