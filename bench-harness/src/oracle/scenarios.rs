//! Random scenarios for the differential oracle: small isolated clusters written as kube
//! scheduler_perf files that kube's own scheduler_perf runs unchanged (`kube-reference`'s
//! `perf.test -record`), so the real kube-scheduler's decisions on varied inputs can be
//! replayed and judged by `tidegate replay`.
//!
//! Scenario `i` is a namespace `scenario-<i>` with its own nodes (`scenario-<i>-node-<j>`,
//! labelled `tidegate.dev/scenario: scenario-<i>`) and pods (`pod-<j>`, each with that label as
//! its nodeSelector), so many scenarios share one API server and scheduler without touching
//! each other: no pod fits another scenario's nodes, zones are per scenario, and inter-pod
//! affinity and spreading count pods of the pod's own namespace (or on its own nodes). What
//! varies (resources, priorities, ports, taints and tolerations, node and inter-pod affinity,
//! topology spreading, scheduling gates, pod groups, devices, volumes) and how often is
//! [`Mix`].
//!
//! Each scenario draws from its own ChaCha8 stream (`seed`, stream `i`), so a scenario is the
//! same whatever the batch size. A batch of scenarios is one test case, `Random<seed>Batch<b>`
//! with one workload `Scenarios<count>`; its ops, in order: every scenario's nodes
//! (`createNodes`), `startCollectingMetrics` over the batch's namespaces (scheduler_perf
//! rejects a test case that collects no metrics), every scenario's devices and volumes
//! (`createAny`; each PersistentVolume, and each pre-bound claim, followed by an `updateAny`
//! that gives it its phase: [`super::scenarios_volumes`]), the pod groups
//! (`createPodGroups`), every scenario's pods (`createPods`, `skipWaitToCompletion`), an
//! `updateAny` per gated pod that removes its gate, a `sleep` (so preemptors retry after their
//! backoff) and `stopCollectingMetrics`. No barrier: preemption victims vanish, so a count
//! would never be reached.
//!
//! Every template is one fixed object (no template actions), at `templates/b<b>/...` relative
//! to the config, which is where scheduler_perf looks when run from the config's folder:
//!
//! ```sh
//! tidegate kube-scenarios --seed 1 --scenarios 100 --out /tmp/random
//! cd /tmp/random && PATH=$REPO/target/kube-reference:$PATH $REPO/target/kube-reference/perf.test \
//!     -test.run '^$' -test.bench 'BenchmarkPerfScheduling/^Random1Batch0$/^Scenarios100$' \
//!     -test.benchtime 1x -config random-config.yaml -topic random -data-items-dir /tmp/items \
//!     -record /tmp/rec -perf-scheduling-label-filter=
//! tidegate replay /tmp/rec/BenchmarkPerfScheduling_Random1Batch0_Scenarios100.jsonl
//! ```

use k8s_openapi::api::core::v1 as core;
use k8s_openapi::api::scheduling::v1beta1::{
    BasicSchedulingPolicy, GangSchedulingPolicy, PodGroup, PodGroupSchedulingConstraints,
    PodGroupSchedulingPolicy, PodGroupSpec, TopologyConstraint,
};
use k8s_openapi::apimachinery::pkg::api::resource::Quantity;
use k8s_openapi::apimachinery::pkg::apis::meta::v1::{
    LabelSelector, LabelSelectorRequirement, ObjectMeta,
};
use rand::{Rng, SeedableRng};
use rand_chacha::ChaCha8Rng;
use std::collections::BTreeMap;
use std::fmt::Write as _;

use super::draw::{between, chance, pick, pick_weighted};
use super::scenarios_dra::{DraMix, DraObjects, make_dra};
use super::scenarios_volumes::{VolumeMix, VolumeObjects, make_volumes, volume_ops};

/// The node label every pod of a scenario selects.
pub const SCENARIO_LABEL: &str = "tidegate.dev/scenario";
/// The gate of gated pods, removed by an `updateAny`.
pub const GATE: &str = "tidegate.dev/hold";
pub const HOSTNAME: &str = "kubernetes.io/hostname";
pub const ZONE: &str = "topology.kubernetes.io/zone";
/// Scenarios per batch (test case) unless told otherwise.
pub const DEFAULT_PER_BATCH: usize = 100;
/// The config file's name in the output folder.
pub const CONFIG_FILE: &str = "random-config.yaml";

/// What a scenario is made of and how often each feature appears. Percentages are of the
/// nodes or pods drawn; `(value, weight)` lists are drawn by weight.
#[derive(Clone, Debug)]
pub struct Mix {
    pub nodes: (u32, u32),
    pub pods: (u32, u32),
    pub max_zones: u32,
    pub node_cpu: &'static [&'static str],
    pub node_memory: &'static [&'static str],
    /// `status.capacity.pods`: `many_pods`, or on this share of the nodes a few (`few_pods`).
    pub few_pods_pct: u32,
    pub few_pods: (u32, u32),
    pub many_pods: u32,
    pub disks: &'static [&'static str],
    pub taint_pct: u32,
    /// (key, value, effect).
    pub taints: &'static [(&'static str, Option<&'static str>, &'static str)],
    pub unschedulable_pct: u32,
    pub apps: &'static [&'static str],
    pub priorities: &'static [(i32, u32)],
    /// `None`: no request of that resource.
    pub pod_cpu: &'static [Option<&'static str>],
    pub pod_memory: &'static [Option<&'static str>],
    pub host_port_pct: u32,
    pub host_ports: &'static [i32],
    pub container_port: i32,
    pub toleration_pct: u32,
    /// (key, operator, value, effect).
    pub tolerations: &'static [(
        &'static str,
        &'static str,
        Option<&'static str>,
        Option<&'static str>,
    )],
    pub node_affinity_pct: u32,
    /// Of the node and inter-pod (anti-)affinity terms, the share that is required (the rest
    /// preferred, with a weight from `weights`).
    pub required_pct: u32,
    pub pod_affinity_pct: u32,
    pub pod_anti_affinity_pct: u32,
    /// Of the inter-pod terms' label selectors, the share written as matchLabels (the rest as
    /// matchExpressions with one of `selector_operators`).
    pub match_labels_pct: u32,
    pub selector_operators: &'static [&'static str],
    pub spread_pct: u32,
    pub max_skews: &'static [i32],
    pub when_unsatisfiable: &'static [&'static str],
    pub gated_pct: u32,
    /// Preferred-term weights, inclusive.
    pub weights: (i32, i32),
    pub topology_keys: &'static [&'static str],
    pub image: &'static str,
    /// The `sleep` after the updates (a Go duration).
    pub settle: &'static str,
    /// The share of scenarios with pod groups (drawn from the scenario's second stream, so
    /// that the scenarios without groups are those of a mix without them).
    pub group_pct: u32,
    /// Groups per such scenario, and members per group (consecutive pods), inclusive.
    pub groups: (u32, u32),
    pub group_size: (u32, u32),
    /// Of the groups, the share with a gang policy (the rest `basic`); a gang's `minCount`
    /// is drawn from 1 to its size.
    pub gang_pct: u32,
    /// Of the groups, the share with a topology constraint (one of `topology_keys`).
    pub group_topology_pct: u32,
    /// Devices ([`super::scenarios_dra`]; drawn from the scenario's third stream).
    pub dra: DraMix,
    /// Storage classes, volumes, claims and CSINodes ([`super::scenarios_volumes`]; drawn
    /// from the scenario's fourth stream).
    pub volumes: VolumeMix,
}

impl Mix {
    pub const DEFAULT: Mix = Mix {
        nodes: (2, 6),
        pods: (3, 10),
        max_zones: 3,
        node_cpu: &["2", "4", "8"],
        node_memory: &["4Gi", "8Gi", "16Gi"],
        few_pods_pct: 20,
        few_pods: (3, 6),
        many_pods: 110,
        disks: &["ssd", "hdd"],
        taint_pct: 25,
        taints: &[
            ("dedicated", Some("gpu"), "NoSchedule"),
            ("dedicated", Some("infra"), "PreferNoSchedule"),
            ("flaky", None, "NoExecute"),
        ],
        unschedulable_pct: 5,
        apps: &["a", "b", "c"],
        priorities: &[(0, 60), (10, 25), (100, 15)],
        pod_cpu: &[
            None,
            Some("100m"),
            Some("250m"),
            Some("500m"),
            Some("1"),
            Some("2"),
            Some("3"),
        ],
        pod_memory: &[None, Some("128Mi"), Some("512Mi"), Some("1Gi"), Some("4Gi")],
        host_port_pct: 15,
        host_ports: &[8080, 8081],
        container_port: 8080,
        toleration_pct: 30,
        tolerations: &[
            ("dedicated", "Exists", None, None),
            ("dedicated", "Equal", Some("gpu"), Some("NoSchedule")),
            ("flaky", "Exists", None, Some("NoExecute")),
        ],
        node_affinity_pct: 20,
        required_pct: 50,
        pod_affinity_pct: 15,
        pod_anti_affinity_pct: 20,
        match_labels_pct: 50,
        selector_operators: &["In", "NotIn"],
        spread_pct: 20,
        max_skews: &[1, 2],
        when_unsatisfiable: &["DoNotSchedule", "ScheduleAnyway"],
        gated_pct: 15,
        weights: (1, 100),
        topology_keys: &[HOSTNAME, ZONE],
        image: "registry.k8s.io/pause:3.10.1",
        settle: "6s",
        group_pct: 35,
        groups: (1, 2),
        group_size: (2, 4),
        gang_pct: 70,
        group_topology_pct: 30,
        dra: DraMix {
            pct: 30,
            devices: (0, 3),
            claim_pct: 50,
        },
        volumes: VolumeMix::DEFAULT,
    };
}

impl Default for Mix {
    fn default() -> Mix {
        Mix::DEFAULT
    }
}

/// One scenario: its nodes, its pod groups and its pods in creation order (gated pods with
/// their gate; a group's members name it in `spec.schedulingGroup`).
#[derive(Clone, Debug)]
pub struct Scenario {
    pub index: usize,
    pub nodes: Vec<core::Node>,
    pub groups: Vec<PodGroup>,
    pub pods: Vec<core::Pod>,
    /// Its devices, classes and claim templates, if it has any.
    pub dra: Option<DraObjects>,
    /// Its storage classes, volumes, claims and CSINodes, if it has any.
    pub volumes: Option<VolumeObjects>,
}

impl Scenario {
    pub fn namespace(&self) -> String {
        namespace(self.index)
    }
}

/// The feature gates of a batch with pod groups (kube v1.37: GenericWorkload beta and
/// TopologyAwareWorkloadScheduling alpha, both off by default).
pub const GROUP_GATES: &[&str] = &["GenericWorkload", "TopologyAwareWorkloadScheduling"];

/// The gate a test case with devices sets (GA and on by default in kube v1.37, but
/// scheduler_perf starts the ResourceClaim controller only when the test case names it).
pub const DRA_GATE: &str = "DynamicResourceAllocation";

/// The test case of batch `b`'s scenarios with pod groups (those without are
/// [`test_case_name`]'s), so that a tidegate without pod groups still runs the others.
pub fn group_test_case_name(seed: u64, batch: usize) -> String {
    format!("Random{seed}GroupBatch{batch}")
}

/// The pod group a pod joins (`spec.schedulingGroup.podGroupName`), if any.
pub fn pod_group_of(pod: &core::Pod) -> Option<&str> {
    pod.spec
        .as_ref()?
        .scheduling_group
        .as_ref()?
        .pod_group_name
        .as_deref()
}

pub fn namespace(index: usize) -> String {
    format!("scenario-{index}")
}

/// The test case of batch `b`.
pub fn test_case_name(seed: u64, batch: usize) -> String {
    format!("Random{seed}Batch{batch}")
}

/// The one workload of a batch of `count` scenarios.
pub fn workload_name(count: usize) -> String {
    format!("Scenarios{count}")
}

/// Whether `pod` carries scheduling gates.
pub fn is_gated(pod: &core::Pod) -> bool {
    pod.spec
        .as_ref()
        .and_then(|s| s.scheduling_gates.as_ref())
        .is_some_and(|g| !g.is_empty())
}

/// `pod` without its scheduling gates, everything else the same (the `updateAny` object).
pub fn ungated(pod: &core::Pod) -> core::Pod {
    let mut p = pod.clone();
    if let Some(s) = p.spec.as_mut() {
        s.scheduling_gates = None;
    }
    p
}

/// Scenario `index` of `seed`: its own ChaCha8 stream, so independent of the batching.
pub fn scenario(seed: u64, index: usize, mix: &Mix) -> Scenario {
    let mut rng = ChaCha8Rng::seed_from_u64(seed);
    rng.set_stream(index as u64);
    let ns = namespace(index);
    let node_count = between(&mut rng, mix.nodes);
    let zones = node_count.min(mix.max_zones).max(1);
    let nodes: Vec<core::Node> = (0..node_count)
        .map(|j| make_node(&mut rng, mix, &ns, j, j % zones))
        .collect();
    let pod_count = between(&mut rng, mix.pods);
    let mut pods: Vec<core::Pod> = (0..pod_count)
        .map(|j| make_pod(&mut rng, mix, &ns, j))
        .collect();
    // The groups draw from a second stream, so that the draws above are those of a mix
    // without groups.
    let mut grng = ChaCha8Rng::seed_from_u64(seed);
    grng.set_stream(index as u64 | 1 << 32);
    let groups = make_groups(&mut grng, mix, &ns, &mut pods);
    // Devices from a third stream, for the same reason.
    let mut drng = ChaCha8Rng::seed_from_u64(seed);
    drng.set_stream(index as u64 | 2 << 32);
    let dra = make_dra(&mut drng, &mix.dra, &ns, &nodes, &mut pods);
    // Volumes from a fourth, beside pod groups too.
    let mut vrng = ChaCha8Rng::seed_from_u64(seed);
    vrng.set_stream(index as u64 | 3 << 32);
    let volumes = make_volumes(&mut vrng, &mix.volumes, &ns, &nodes, &mut pods);
    Scenario {
        index,
        nodes,
        groups,
        pods,
        dra,
        volumes,
    }
}

/// The scenario's pod groups, if it draws any: each takes `group_size` consecutive pods from
/// a random start (the pods before, between and after stay ordinary; gated pods may be
/// members), a gang policy (`minCount` from 1 to its size) or `basic`, sometimes a topology
/// constraint, and the priority of its first member, which every member then gets (kube's
/// PodGroup priority is the group's; pods of one group at different priorities are not what
/// a workload controller writes).
fn make_groups(rng: &mut ChaCha8Rng, mix: &Mix, ns: &str, pods: &mut [core::Pod]) -> Vec<PodGroup> {
    if pods.len() < 2 || !chance(rng, mix.group_pct) {
        return Vec::new();
    }
    let count = between(rng, mix.groups);
    let mut at = rng.random_range(0..pods.len() as u32 / 2) as usize;
    let mut groups = Vec::new();
    for k in 0..count {
        let size = (between(rng, mix.group_size) as usize).min(pods.len() - at);
        if size < 2 {
            break;
        }
        let name = format!("pg-{k}");
        let members = &mut pods[at..at + size];
        let priority = members[0].spec.as_ref().and_then(|s| s.priority);
        for p in members.iter_mut() {
            let spec = p.spec.as_mut().expect("generated pods have a spec");
            spec.priority = priority;
            spec.scheduling_group = Some(core::PodSchedulingGroup {
                pod_group_name: Some(name.clone()),
            });
        }
        let policy = if chance(rng, mix.gang_pct) {
            PodGroupSchedulingPolicy {
                gang: Some(GangSchedulingPolicy {
                    min_count: rng.random_range(1..=size as i32),
                }),
                ..Default::default()
            }
        } else {
            PodGroupSchedulingPolicy {
                basic: Some(BasicSchedulingPolicy(serde_json::json!({}))),
                ..Default::default()
            }
        };
        let constraints =
            chance(rng, mix.group_topology_pct).then(|| PodGroupSchedulingConstraints {
                topology: Some(vec![TopologyConstraint {
                    key: pick(rng, mix.topology_keys).into(),
                }]),
            });
        groups.push(PodGroup {
            metadata: ObjectMeta {
                name: Some(name),
                namespace: Some(ns.into()),
                ..Default::default()
            },
            spec: PodGroupSpec {
                scheduling_policy: policy,
                scheduling_constraints: constraints,
                priority,
                ..Default::default()
            },
            status: None,
        });
        at += size;
        if at + 2 > pods.len() {
            break;
        }
        // A gap of ordinary pods (possibly none) before the next group.
        at += rng.random_range(0..=1) as usize;
    }
    groups
}

fn q(s: &str) -> Quantity {
    Quantity(s.to_string())
}

fn labels(pairs: &[(&str, &str)]) -> BTreeMap<String, String> {
    pairs
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect()
}

fn make_node(rng: &mut ChaCha8Rng, mix: &Mix, ns: &str, j: u32, zone: u32) -> core::Node {
    let name = format!("{ns}-node-{j}");
    let zone = format!("{ns}-zone-{zone}");
    let disk = pick(rng, mix.disks);
    let cpu = pick(rng, mix.node_cpu);
    let memory = pick(rng, mix.node_memory);
    let pods = if chance(rng, mix.few_pods_pct) {
        between(rng, mix.few_pods)
    } else {
        mix.many_pods
    }
    .to_string();
    let taints = chance(rng, mix.taint_pct).then(|| {
        let (key, value, effect) = pick(rng, mix.taints);
        vec![core::Taint {
            key: key.into(),
            value: value.map(Into::into),
            effect: effect.into(),
            ..Default::default()
        }]
    });
    let unschedulable = chance(rng, mix.unschedulable_pct).then_some(true);
    core::Node {
        metadata: ObjectMeta {
            name: Some(name.clone()),
            labels: Some(labels(&[
                (HOSTNAME, &name),
                (ZONE, &zone),
                (SCENARIO_LABEL, ns),
                ("disk", disk),
            ])),
            ..Default::default()
        },
        spec: Some(core::NodeSpec {
            taints,
            unschedulable,
            ..Default::default()
        }),
        status: Some(core::NodeStatus {
            capacity: Some(BTreeMap::from([
                ("cpu".to_string(), q(cpu)),
                ("memory".to_string(), q(memory)),
                ("pods".to_string(), q(&pods)),
            ])),
            conditions: Some(vec![core::NodeCondition {
                type_: "Ready".into(),
                status: "True".into(),
                ..Default::default()
            }]),
            phase: Some("Running".into()),
            ..Default::default()
        }),
    }
}

fn make_pod(rng: &mut ChaCha8Rng, mix: &Mix, ns: &str, j: u32) -> core::Pod {
    let app = pick(rng, mix.apps);
    let priority = pick_weighted(rng, mix.priorities);
    let container = make_container(rng, mix);
    let tolerations = chance(rng, mix.toleration_pct).then(|| {
        let (key, operator, value, effect) = pick(rng, mix.tolerations);
        vec![core::Toleration {
            key: Some(key.into()),
            operator: Some(operator.into()),
            value: value.map(Into::into),
            effect: effect.map(Into::into),
            ..Default::default()
        }]
    });
    let affinity = make_affinity(rng, mix);
    let spread = chance(rng, mix.spread_pct).then(|| {
        vec![core::TopologySpreadConstraint {
            max_skew: pick(rng, mix.max_skews),
            topology_key: pick(rng, mix.topology_keys).into(),
            when_unsatisfiable: pick(rng, mix.when_unsatisfiable).into(),
            label_selector: Some(match_labels(pick(rng, mix.apps))),
            ..Default::default()
        }]
    });
    let gates =
        chance(rng, mix.gated_pct).then(|| vec![core::PodSchedulingGate { name: GATE.into() }]);
    core::Pod {
        metadata: ObjectMeta {
            name: Some(format!("pod-{j}")),
            namespace: Some(ns.into()),
            // scheduler_perf's createPods sets `signature: signature-label-0` on every pod it
            // creates (its default signatureBatchSize is 1); writing it here keeps the
            // ungated twin, a whole-object update, identical but for the gates.
            labels: Some(labels(&[("app", app), ("signature", "signature-label-0")])),
            ..Default::default()
        },
        spec: Some(core::PodSpec {
            containers: vec![container],
            node_selector: Some(labels(&[(SCENARIO_LABEL, ns)])),
            priority: Some(priority),
            termination_grace_period_seconds: Some(0),
            tolerations,
            affinity,
            topology_spread_constraints: spread,
            scheduling_gates: gates,
            ..Default::default()
        }),
        status: None,
    }
}

fn make_container(rng: &mut ChaCha8Rng, mix: &Mix) -> core::Container {
    let mut requests = BTreeMap::new();
    if let Some(cpu) = pick(rng, mix.pod_cpu) {
        requests.insert("cpu".to_string(), q(cpu));
    }
    if let Some(memory) = pick(rng, mix.pod_memory) {
        requests.insert("memory".to_string(), q(memory));
    }
    let ports = chance(rng, mix.host_port_pct).then(|| {
        vec![core::ContainerPort {
            container_port: mix.container_port,
            host_port: Some(pick(rng, mix.host_ports)),
            protocol: Some("TCP".into()),
            ..Default::default()
        }]
    });
    core::Container {
        name: "pause".into(),
        image: Some(mix.image.into()),
        ports,
        resources: (!requests.is_empty()).then(|| core::ResourceRequirements {
            requests: Some(requests),
            ..Default::default()
        }),
        ..Default::default()
    }
}

fn match_labels(app: &str) -> LabelSelector {
    LabelSelector {
        match_labels: Some(labels(&[("app", app)])),
        ..Default::default()
    }
}

fn make_affinity(rng: &mut ChaCha8Rng, mix: &Mix) -> Option<core::Affinity> {
    let node_affinity = chance(rng, mix.node_affinity_pct).then(|| {
        let term = |disk: &str| core::NodeSelectorTerm {
            match_expressions: Some(vec![core::NodeSelectorRequirement {
                key: "disk".into(),
                operator: "In".into(),
                values: Some(vec![disk.into()]),
            }]),
            ..Default::default()
        };
        if chance(rng, mix.required_pct) {
            core::NodeAffinity {
                required_during_scheduling_ignored_during_execution: Some(core::NodeSelector {
                    node_selector_terms: vec![term("ssd")],
                }),
                ..Default::default()
            }
        } else {
            let weight = rng.random_range(mix.weights.0..=mix.weights.1);
            core::NodeAffinity {
                preferred_during_scheduling_ignored_during_execution: Some(vec![
                    core::PreferredSchedulingTerm {
                        weight,
                        preference: term(pick(rng, mix.disks)),
                    },
                ]),
                ..Default::default()
            }
        }
    });
    let pod_affinity = chance(rng, mix.pod_affinity_pct).then(|| {
        let (required, preferred) = pod_terms(rng, mix);
        core::PodAffinity {
            required_during_scheduling_ignored_during_execution: required,
            preferred_during_scheduling_ignored_during_execution: preferred,
        }
    });
    let pod_anti_affinity = chance(rng, mix.pod_anti_affinity_pct).then(|| {
        let (required, preferred) = pod_terms(rng, mix);
        core::PodAntiAffinity {
            required_during_scheduling_ignored_during_execution: required,
            preferred_during_scheduling_ignored_during_execution: preferred,
        }
    });
    let any = node_affinity.is_some() || pod_affinity.is_some() || pod_anti_affinity.is_some();
    any.then_some(core::Affinity {
        node_affinity,
        pod_affinity,
        pod_anti_affinity,
    })
}

type PodTerms = (
    Option<Vec<core::PodAffinityTerm>>,
    Option<Vec<core::WeightedPodAffinityTerm>>,
);

/// One inter-pod (anti-)affinity term, required or preferred.
fn pod_terms(rng: &mut ChaCha8Rng, mix: &Mix) -> PodTerms {
    let app = pick(rng, mix.apps);
    let label_selector = if chance(rng, mix.match_labels_pct) {
        match_labels(app)
    } else {
        LabelSelector {
            match_expressions: Some(vec![LabelSelectorRequirement {
                key: "app".into(),
                operator: pick(rng, mix.selector_operators).into(),
                values: Some(vec![app.into()]),
            }]),
            ..Default::default()
        }
    };
    let term = core::PodAffinityTerm {
        label_selector: Some(label_selector),
        topology_key: pick(rng, mix.topology_keys).into(),
        ..Default::default()
    };
    if chance(rng, mix.required_pct) {
        (Some(vec![term]), None)
    } else {
        let weight = rng.random_range(mix.weights.0..=mix.weights.1);
        (
            None,
            Some(vec![core::WeightedPodAffinityTerm {
                weight,
                pod_affinity_term: term,
            }]),
        )
    }
}

/// A generated file: its path relative to the output folder, and its text.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct File {
    pub path: String,
    pub contents: String,
}

/// Every file of `scenarios` scenarios of `seed` in batches of `per_batch` (at least 1): the
/// templates, then [`CONFIG_FILE`] last.
pub fn generate(seed: u64, scenarios: usize, per_batch: usize, mix: &Mix) -> Vec<File> {
    let per_batch = per_batch.max(1);
    let mut files = Vec::new();
    let mut config = format!(
        "# Generated by `tidegate kube-scenarios --seed {seed} --scenarios {scenarios} --per-batch {per_batch}`.\n\
         # Run from this folder (template paths are relative to it).\n"
    );
    let batches = scenarios.div_ceil(per_batch);
    for b in 0..batches {
        let range = b * per_batch..scenarios.min((b + 1) * per_batch);
        let batch: Vec<Scenario> = range.map(|i| scenario(seed, i, mix)).collect();
        batch_files(seed, b, &batch, mix, &mut config, &mut files);
    }
    files.push(File {
        path: CONFIG_FILE.into(),
        contents: config,
    });
    files
}

/// The test cases [`generate`] writes, in order, each as `TestCase/Workload` (the names
/// kube's `-test.bench` pattern and `tidegate run --workload` take).
pub fn test_cases(seed: u64, scenarios: usize, per_batch: usize, mix: &Mix) -> Vec<String> {
    let per_batch = per_batch.max(1);
    let mut out = Vec::new();
    for b in 0..scenarios.div_ceil(per_batch) {
        let range = b * per_batch..scenarios.min((b + 1) * per_batch);
        let grouped = range
            .clone()
            .filter(|&i| !scenario(seed, i, mix).groups.is_empty())
            .count();
        let plain = range.len() - grouped;
        if plain > 0 {
            out.push(format!(
                "{}/{}",
                test_case_name(seed, b),
                workload_name(plain)
            ));
        }
        if grouped > 0 {
            out.push(format!(
                "{}/{}",
                group_test_case_name(seed, b),
                workload_name(grouped)
            ));
        }
    }
    out
}

/// Batch `b`'s templates into `files` and its test cases onto `config`: the scenarios
/// without pod groups as [`test_case_name`], those with as [`group_test_case_name`] (with
/// [`GROUP_GATES`] on); a test case with no scenario is left out.
fn batch_files(
    seed: u64,
    b: usize,
    batch: &[Scenario],
    mix: &Mix,
    config: &mut String,
    files: &mut Vec<File>,
) {
    let (grouped, plain): (Vec<&Scenario>, Vec<&Scenario>) =
        batch.iter().partition(|s| !s.groups.is_empty());
    for (name, scenarios, gates) in [
        (test_case_name(seed, b), plain, &[][..]),
        (group_test_case_name(seed, b), grouped, GROUP_GATES),
    ] {
        if scenarios.is_empty() {
            continue;
        }
        // scheduler_perf runs the ResourceClaim controller (which makes the claims of the
        // pods' templates) only for a test case that sets the DRA gate itself.
        let mut gates = gates.to_vec();
        if scenarios.iter().any(|s| s.dra.is_some()) {
            gates.push(DRA_GATE);
        }
        test_case_files(&name, b, &scenarios, &gates, mix, config, files);
    }
}

/// One test case of batch `b`: its templates into `files`, its ops onto `config`. The pod
/// groups are created (createPodGroups, one per group) after the nodes and before any pod.
fn test_case_files(
    name: &str,
    b: usize,
    batch: &[&Scenario],
    gates: &[&str],
    mix: &Mix,
    config: &mut String,
    files: &mut Vec<File>,
) {
    let mut add = |path: String, value: serde_json::Value| {
        files.push(File {
            path: path.clone(),
            contents: to_yaml(&value),
        });
        path
    };
    let mut nodes = String::new();
    let mut devices = String::new();
    let mut groups = String::new();
    let mut pods = String::new();
    let mut updates = String::new();
    for s in batch {
        let (ns, dir) = (s.namespace(), format!("templates/b{b}/{}", s.namespace()));
        for (j, n) in s.nodes.iter().enumerate() {
            let path = add(format!("{dir}/node-{j}.yaml"), json(n));
            let _ = write!(
                nodes,
                "  - opcode: createNodes\n    count: 1\n    nodeTemplatePath: {path}\n"
            );
        }
        for (kind, objects, namespace) in s.dra.iter().flat_map(|d| {
            [
                ("class", &d.classes, None),
                ("slice", &d.slices, None),
                ("template", &d.templates, Some(&ns)),
            ]
        }) {
            for (k, o) in objects.iter().enumerate() {
                let path = add(format!("{dir}/{kind}-{k}.yaml"), o.clone());
                let _ = write!(devices, "  - opcode: createAny\n    templatePath: {path}\n");
                if let Some(ns) = namespace {
                    let _ = writeln!(devices, "    namespace: {ns}");
                }
            }
        }
        if let Some(v) = &s.volumes {
            volume_ops(v, &ns, &dir, &mut add, &mut devices);
        }
        for g in &s.groups {
            let gname = g.metadata.name.as_deref().unwrap_or_default();
            let path = add(format!("{dir}/{gname}.yaml"), json(g));
            let _ = write!(
                groups,
                "  - opcode: createPodGroups\n    count: 1\n    namespace: {ns}\n    templatePath: {path}\n"
            );
        }
        for (j, p) in s.pods.iter().enumerate() {
            let path = add(format!("{dir}/pod-{j}.yaml"), json(p));
            let _ = write!(
                pods,
                "  - opcode: createPods\n    count: 1\n    namespace: {ns}\n    podTemplatePath: {path}\n    skipWaitToCompletion: true\n"
            );
            if is_gated(p) {
                let path = add(format!("{dir}/pod-{j}-ungated.yaml"), json(&ungated(p)));
                let _ = write!(
                    updates,
                    "  - opcode: updateAny\n    namespace: {ns}\n    templatePath: {path}\n"
                );
            }
        }
    }
    let _ = writeln!(config, "- name: {name}");
    if !gates.is_empty() {
        let _ = writeln!(config, "  featureGates:");
        for g in gates {
            let _ = writeln!(config, "    {g}: true");
        }
    }
    let _ = write!(
        config,
        "  workloadTemplate:\n{nodes}  - opcode: startCollectingMetrics\n    name: scenarios\n    namespaces:\n"
    );
    for s in batch {
        let _ = writeln!(config, "    - {}", s.namespace());
    }
    let _ = write!(
        config,
        "{devices}{groups}{pods}{updates}  - opcode: sleep\n    duration: {}\n  - opcode: stopCollectingMetrics\n  workloads:\n  - name: {}\n    labels:\n    - integration-test\n    - random\n",
        mix.settle,
        workload_name(batch.len())
    );
}

/// A Kubernetes object as JSON (k8s-openapi's serialization adds apiVersion and kind).
fn json<T: serde::Serialize>(object: &T) -> serde_json::Value {
    serde_json::to_value(object).expect("k8s-openapi objects serialize")
}

/// Block-style YAML of a JSON value (keys sorted, as serde_json's map keeps them). Strings
/// are plain when YAML reads them back as the same string, else double-quoted (a JSON string
/// is a valid YAML double-quoted scalar).
pub fn to_yaml(v: &serde_json::Value) -> String {
    let mut out = String::new();
    emit(v, 0, &mut out);
    out
}

fn emit(v: &serde_json::Value, indent: usize, out: &mut String) {
    use serde_json::Value;
    let pad = " ".repeat(indent);
    match v {
        Value::Object(m) if !m.is_empty() => {
            for (k, val) in m {
                let _ = write!(out, "{pad}{}:", scalar_str(k));
                value_after_key(val, indent, out);
            }
        }
        Value::Array(a) if !a.is_empty() => {
            for item in a {
                let _ = write!(out, "{pad}-");
                match item {
                    Value::Object(m) if !m.is_empty() => {
                        // The first key on the dash's line, the rest aligned under it.
                        let mut inner = String::new();
                        emit(item, indent + 2, &mut inner);
                        out.push(' ');
                        out.push_str(&inner[indent + 2..]);
                    }
                    Value::Array(a) if !a.is_empty() => {
                        out.push('\n');
                        emit(item, indent + 2, out);
                    }
                    _ => {
                        let _ = writeln!(out, " {}", scalar(item));
                    }
                }
            }
        }
        _ => {
            let _ = writeln!(out, "{pad}{}", scalar(v));
        }
    }
}

/// After `key:`: a scalar on the same line, a collection on the lines below (a sequence at
/// the key's indent, as Kubernetes manifests write it).
fn value_after_key(val: &serde_json::Value, indent: usize, out: &mut String) {
    use serde_json::Value;
    match val {
        Value::Object(m) if !m.is_empty() => {
            out.push('\n');
            emit(val, indent + 2, out);
        }
        Value::Array(a) if !a.is_empty() => {
            out.push('\n');
            emit(val, indent, out);
        }
        _ => {
            let _ = writeln!(out, " {}", scalar(val));
        }
    }
}

fn scalar(v: &serde_json::Value) -> String {
    use serde_json::Value;
    match v {
        Value::Null => "null".into(),
        Value::Bool(b) => b.to_string(),
        Value::Number(n) => n.to_string(),
        Value::String(s) => scalar_str(s),
        Value::Array(_) => "[]".into(),
        Value::Object(_) => "{}".into(),
    }
}

/// `s` plain when it starts with a letter, holds only `[A-Za-z0-9._/-]` and `:` not at the
/// end, and is not one of YAML 1.1's booleans or null (go-yaml v2, which kube reads templates
/// with, takes `yes`, `on`, `y` as booleans); double-quoted otherwise.
fn scalar_str(s: &str) -> String {
    const RESERVED: &[&str] = &[
        "true", "false", "yes", "no", "on", "off", "y", "n", "null", "~",
    ];
    let plain = s.starts_with(|c: char| c.is_ascii_alphabetic())
        && s.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '.' | '_' | '/' | '-' | ':'))
        && !s.ends_with(':')
        && !RESERVED.contains(&s.to_ascii_lowercase().as_str());
    if plain {
        s.to_string()
    } else {
        serde_json::Value::String(s.to_string()).to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn strings_that_yaml_would_retype_are_quoted() {
        assert_eq!(scalar_str("True"), "\"True\"");
        assert_eq!(scalar_str("110"), "\"110\"");
        assert_eq!(scalar_str("100m"), "\"100m\"");
        assert_eq!(scalar_str("8Gi"), "\"8Gi\"");
        assert_eq!(scalar_str("scenario-0-node-1"), "scenario-0-node-1");
        assert_eq!(scalar_str("y"), "\"y\"");
        assert_eq!(
            scalar_str("registry.k8s.io/pause:3.10.1"),
            "registry.k8s.io/pause:3.10.1"
        );
        assert_eq!(scalar_str("a: b"), "\"a: b\"");
        assert_eq!(scalar_str(""), "\"\"");
    }

    #[test]
    fn nested_sequences_and_maps_are_block_yaml() {
        let v = serde_json::json!({
            "a": [{"b": 1, "c": ["x", "y"]}, "z"],
            "d": {},
            "e": {"f": [[1, 2]]}
        });
        assert_eq!(
            to_yaml(&v),
            "a:\n- b: 1\n  c:\n  - x\n  - \"y\"\n- z\nd: {}\ne:\n  f:\n  -\n    - 1\n    - 2\n"
        );
    }

    #[test]
    fn weighted_picks_follow_the_weights() {
        let mut rng = ChaCha8Rng::seed_from_u64(3);
        let mut counts = BTreeMap::new();
        for _ in 0..10_000 {
            *counts
                .entry(pick_weighted(&mut rng, Mix::DEFAULT.priorities))
                .or_insert(0) += 1;
        }
        assert!((5_500..6_500).contains(&counts[&0]), "{counts:?}");
        assert!((2_000..3_000).contains(&counts[&10]), "{counts:?}");
        assert!((1_000..2_000).contains(&counts[&100]), "{counts:?}");
    }
}
