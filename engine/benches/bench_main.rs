//! Engine benchmarks (criterion). One binary, a module per topic.
//!
//! `cargo bench -p tidegate-engine --bench bench_main -- activeq` runs the activeQ group (a
//! group whose name the filter cannot match skips its set-up too).

use criterion::{criterion_group, criterion_main};

// The same allocator as the `tidegate` binary, so the figures match what a run sees.
#[global_allocator]
static GLOBAL: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// Whether the command line's filter can select a benchmark of `group`. Criterion skips
/// unselected benchmarks but not the set-up code around them, and some set-ups are heavy
/// (a queue holding 1,000,000 gated pods), so each group asks first.
fn selected(group: &str) -> bool {
    // Criterion flags that take a value: that value is not a filter.
    const WITH_VALUE: &[&str] = &[
        "--profile-time",
        "--sample-size",
        "--warm-up-time",
        "--measurement-time",
        "--save-baseline",
        "--baseline",
        "--baseline-lenient",
        "--load-baseline",
        "--output-format",
        "--color",
        "--plotting-backend",
        "--noise-threshold",
        "--confidence-level",
        "--significance-level",
        "--nresamples",
    ];
    let mut filters = Vec::new();
    let mut args = std::env::args().skip(1);
    while let Some(a) = args.next() {
        if WITH_VALUE.contains(&a.as_str()) {
            args.next();
        } else if !a.starts_with('-') {
            filters.push(a);
        }
    }
    filters.is_empty()
        || filters.iter().any(|f| {
            let head = f.split('/').next().unwrap_or("");
            head.is_empty() || group.contains(head) || head.contains(group)
        })
}

/// Whether the command line's filter can select benchmark ids under `path` (an explicit
/// opt-in for the benchmarks that print instead of going through criterion).
fn selected_path(path: &str) -> bool {
    let filters: Vec<String> = std::env::args()
        .skip(1)
        .filter(|a| !a.starts_with('-'))
        .collect();
    filters
        .iter()
        .any(|f| path.starts_with(f.as_str()) || f.starts_with(path))
}

mod queue {
    use criterion::{BenchmarkId, Criterion, Throughput};
    use parking_lot::Mutex;
    use std::hint::black_box;
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use tidegate_engine::QueueSortPlugin;
    use tidegate_engine::QueuedPodInfo;
    use tidegate_engine::api::{Pod, PodKey, PodSpecInfo};
    use tidegate_engine::bench_support::KeyedHeap;
    use tidegate_engine::bench_support::{ActiveQ, LessFn, PrioritySort};

    fn pods(n: usize, tag: &str) -> Vec<QueuedPodInfo> {
        let spec = Arc::new(PodSpecInfo::default());
        (0..n)
            .map(|i| {
                let name = format!("{tag}-{i}");
                let pod = Pod::new("bench", &name, spec.clone());
                QueuedPodInfo::new(Arc::new(pod), Duration::from_nanos(i as u64))
            })
            .collect()
    }

    fn less() -> LessFn {
        Arc::new(|a: &QueuedPodInfo, b: &QueuedPodInfo| {
            let (pa, pb) = (a.pod.priority(), b.pod.priority());
            pa > pb || (pa == pb && a.timestamp < b.timestamp)
        })
    }

    /// kube-scheduler's shape: one mutex around a heap with a key index.
    struct Baseline(Mutex<KeyedHeap<PodKey, QueuedPodInfo>>);

    impl Baseline {
        fn new() -> Baseline {
            let l = less();
            Baseline(Mutex::new(KeyedHeap::new(Arc::new(move |a, b| l(a, b)))))
        }
        fn push(&self, q: QueuedPodInfo) {
            self.0.lock().push(q.pod.key.clone(), q);
        }
        fn pop(&self) -> Option<QueuedPodInfo> {
            self.0.lock().pop()
        }
        fn remove(&self, k: &PodKey) -> Option<QueuedPodInfo> {
            self.0.lock().remove(k)
        }
    }

    trait Q: Sync {
        fn push(&self, q: QueuedPodInfo);
        fn pop(&self) -> Option<QueuedPodInfo>;
        fn remove(&self, k: &PodKey) -> Option<QueuedPodInfo>;
    }
    impl Q for Baseline {
        fn push(&self, q: QueuedPodInfo) {
            Baseline::push(self, q)
        }
        fn pop(&self) -> Option<QueuedPodInfo> {
            Baseline::pop(self)
        }
        fn remove(&self, k: &PodKey) -> Option<QueuedPodInfo> {
            Baseline::remove(self, k)
        }
    }
    impl Q for ActiveQ {
        fn push(&self, q: QueuedPodInfo) {
            ActiveQ::push(self, q)
        }
        fn pop(&self) -> Option<QueuedPodInfo> {
            self.try_pop()
        }
        fn remove(&self, k: &PodKey) -> Option<QueuedPodInfo> {
            ActiveQ::remove(self, k)
        }
    }

    fn make(kind: &str) -> Box<dyn Q> {
        match kind {
            "sharded" => Box::new(ActiveQ::new(2, less())),
            // PrioritySort's integer key inline in the heaps (the scheduler's default).
            "sharded-keyed" => Box::new(ActiveQ::with_sort_key(2, less(), PrioritySort.sort_key())),
            _ => Box::new(Baseline::new()),
        }
    }

    const KINDS: [&str; 3] = ["single-lock", "sharded", "sharded-keyed"];

    pub fn bench(c: &mut Criterion) {
        if !crate::selected("activeq") {
            return;
        }
        let mut g = c.benchmark_group("activeq");
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(500));
        g.measurement_time(Duration::from_secs(2));
        for &n in &[1_000usize, 100_000, 1_000_000] {
            let ps = pods(n, "p");
            g.throughput(Throughput::Elements(n as u64));
            for kind in KINDS {
                g.bench_with_input(BenchmarkId::new(format!("push/{kind}"), n), &n, |b, _| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let q = make(kind);
                            let items = ps.clone();
                            let t = Instant::now();
                            for p in items {
                                q.push(p);
                            }
                            total += t.elapsed();
                        }
                        total
                    })
                });
                g.bench_with_input(BenchmarkId::new(format!("pop/{kind}"), n), &n, |b, _| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let q = make(kind);
                            for p in ps.clone() {
                                q.push(p);
                            }
                            let t = Instant::now();
                            while let Some(x) = q.pop() {
                                black_box(x);
                            }
                            total += t.elapsed();
                        }
                        total
                    })
                });
                // Update: replace every queued pod's object (kube re-fixes the heap; the sharded
                // queue pushes a new live entry and leaves the old one stale).
                g.bench_with_input(BenchmarkId::new(format!("update/{kind}"), n), &n, |b, _| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let q = make(kind);
                            for p in ps.clone() {
                                q.push(p);
                            }
                            let updates = ps.clone();
                            let t = Instant::now();
                            for p in updates {
                                q.push(p);
                            }
                            total += t.elapsed();
                        }
                        total
                    })
                });
                g.bench_with_input(BenchmarkId::new(format!("delete/{kind}"), n), &n, |b, _| {
                    b.iter_custom(|iters| {
                        let mut total = Duration::ZERO;
                        for _ in 0..iters {
                            let q = make(kind);
                            for p in ps.clone() {
                                q.push(p);
                            }
                            let t = Instant::now();
                            for p in &ps {
                                black_box(q.remove(&p.pod.key));
                            }
                            total += t.elapsed();
                        }
                        total
                    })
                });
                // Two producers pushing at once (each half of the pods).
                g.bench_with_input(
                    BenchmarkId::new(format!("push-2-producers/{kind}"), n),
                    &n,
                    |b, _| {
                        let halves: Vec<Vec<QueuedPodInfo>> =
                            ps.chunks(n / 2).map(|c| c.to_vec()).collect();
                        b.iter_custom(|iters| {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                let q = make(kind);
                                let parts = halves.clone();
                                let barrier = std::sync::Barrier::new(2);
                                let t = std::thread::scope(|s| {
                                    let mut hs = vec![];
                                    for part in parts {
                                        let q = &q;
                                        let barrier = &barrier;
                                        hs.push(s.spawn(move || {
                                            barrier.wait();
                                            let t = Instant::now();
                                            for p in part {
                                                q.push(p);
                                            }
                                            t
                                        }));
                                    }
                                    let starts: Vec<Instant> =
                                        hs.into_iter().map(|h| h.join().unwrap()).collect();
                                    starts.into_iter().min().unwrap().elapsed()
                                });
                                total += t;
                            }
                            total
                        })
                    },
                );
            }
        }
        g.finish();
    }
}

mod gated {
    //! PreEnqueue and ungating with 1k versus 1M gated pods already held.

    use criterion::{BenchmarkId, Criterion};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use tidegate_engine::api::{Pod, PodSpecInfo, Sym};

    use tidegate_engine::metrics::Metrics;

    use tidegate_engine::clock::RealClock;
    use tidegate_engine::{QueueConfig, SchedulingQueue};

    fn queue() -> SchedulingQueue {
        SchedulingQueue::gates_only(
            Arc::new(RealClock::new()),
            Arc::new(Metrics::new()),
            QueueConfig::default(),
        )
    }

    fn pod(name: &str, spec: &Arc<PodSpecInfo>) -> Arc<Pod> {
        Arc::new(Pod::new("b", name, spec.clone()))
    }

    pub fn bench(c: &mut Criterion) {
        if !crate::selected("gated") {
            return;
        }
        let gated_spec = Arc::new(PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            scheduling_gates: vec![Arc::from("example.com/hold")],
            ..Default::default()
        });
        let free_spec = Arc::new(PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            ..Default::default()
        });
        let mut g = c.benchmark_group("gated");
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(300));
        g.measurement_time(Duration::from_secs(2));
        for &held in &[1_000usize, 1_000_000] {
            let fill = || {
                let q = queue();
                for i in 0..held {
                    q.add(pod(&format!("held-{i}"), &gated_spec));
                }
                q
            };
            let q = fill();
            // Admitting one more gated pod (PreEnqueue rejects it into the gated set).
            let mut n = 0usize;
            g.bench_function(BenchmarkId::new("add-gated", held), |b| {
                b.iter_custom(|iters| {
                    let pods: Vec<_> = (0..iters)
                        .map(|_| {
                            n += 1;
                            pod(&format!("extra-{n}"), &gated_spec)
                        })
                        .collect();
                    let t = Instant::now();
                    for p in pods {
                        q.add(p);
                    }
                    t.elapsed()
                })
            });
            // Removing the last gate of a held pod: gated set -> activeQ (a fresh queue holding
            // exactly `held` gated pods). Also reports the p99 over every ungate timed.
            drop(q);
            let q = fill();
            let mut hist = hdrhistogram::Histogram::<u64>::new(3).unwrap();
            let mut next = 0usize;
            g.bench_function(BenchmarkId::new("ungate", held), |b| {
                b.iter_custom(|iters| {
                    let mut total = Duration::ZERO;
                    for _ in 0..iters {
                        let name = format!("held-{}", next % held);
                        next += 1;
                        let old = pod(&name, &gated_spec);
                        let new = pod(&name, &free_spec);
                        if q.locate(&old.key) != Some("gated") {
                            // Already ungated in an earlier sample: gate it again untimed.
                            q.delete(&old.key);
                            q.add(old.clone());
                        }
                        let t = Instant::now();
                        q.update(&old, new);
                        let d = t.elapsed();
                        let _ = hist.record(d.as_nanos() as u64);
                        total += d;
                    }
                    total
                })
            });
            if hist.is_empty() {
                continue; // filtered out
            }
            println!(
                "gated/ungate/{held}: p50 {} ns, p99 {} ns over {} ungates",
                hist.value_at_quantile(0.5),
                hist.value_at_quantile(0.99),
                hist.len()
            );
        }
        g.finish();
    }
}

mod events {
    //! The cost of an AssignedPodAdd against the size of the unschedulable pool: kube scans
    //! every parked pod's affinity terms (`getUnschedulablePodsWithCrossTopologyTerm`); the
    //! anchor index visits only the pods filed under the added pod's labels.
    use ahash::AHashMap;
    use criterion::{BenchmarkId, Criterion};
    use std::hint::black_box;
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use tidegate_engine::PreEnqueuePlugin;
    use tidegate_engine::api::{LabelSelector, Labels, Operator, Requirement};
    use tidegate_engine::api::{Pod, PodAffinity, PodAffinityTerm, PodSpecInfo, Sym};
    use tidegate_engine::bench_support::PrioritySort;
    use tidegate_engine::clock::VirtualClock;
    use tidegate_engine::metrics::Metrics;
    use tidegate_engine::{ActionType, ClusterEvent, EventResource};
    use tidegate_engine::{QueueConfig, SchedulingQueue};

    fn wants(name: &str, app: &str) -> Arc<Pod> {
        let spec = PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            pod_affinity: PodAffinity {
                required_affinity: vec![PodAffinityTerm {
                    label_selector: Some(LabelSelector {
                        requirements: vec![Requirement {
                            key: Sym::new("app"),
                            op: Operator::In,
                            values: vec![Sym::new(app)],
                            int_value: 0,
                        }],
                    }),
                    namespaces: vec![],
                    namespace_selector: None,
                    topology_key: Sym::new("kubernetes.io/hostname"),
                    match_label_keys: vec![],
                    mismatch_label_keys: vec![],
                }],
                ..PodAffinity::default()
            },
            ..Default::default()
        };
        Arc::new(Pod::new("b", name, Arc::new(spec)))
    }

    /// `parked` pods in the unschedulable pool, rejected by InterPodAffinity, each wanting
    /// its own `app` value.
    fn parked_queue(parked: usize) -> (SchedulingQueue, Vec<Arc<Pod>>) {
        let mut pe: AHashMap<Sym, Vec<Arc<dyn PreEnqueuePlugin>>> = AHashMap::new();
        pe.insert(Sym::new("default-scheduler"), vec![]);
        let mut events = AHashMap::new();
        events.insert(
            "InterPodAffinity",
            vec![ClusterEvent::new(
                EventResource::AssignedPod,
                ActionType::ADD,
            )],
        );
        let q = SchedulingQueue::new(
            Arc::new(PrioritySort),
            pe,
            events,
            Arc::new(VirtualClock::new()),
            Arc::new(Metrics::new()),
            QueueConfig::default(),
        );
        let mut all = Vec::with_capacity(parked);
        for i in 0..parked {
            let p = wants(&format!("p{i}"), &format!("app-{i}"));
            all.push(p.clone());
            q.add(p);
            let mut qp = q.try_pop().unwrap();
            qp.unschedulable_plugins = vec!["InterPodAffinity"];
            q.add_unschedulable_if_not_present(qp, q.scheduling_cycle())
                .unwrap();
        }
        (q, all)
    }

    pub fn bench(c: &mut Criterion) {
        if !crate::selected("assigned-pod-add") {
            return;
        }
        let mut g = c.benchmark_group("assigned-pod-add");
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(300));
        g.measurement_time(Duration::from_secs(2));
        for &parked in &[1_000usize, 100_000] {
            let (q, all) = parked_queue(parked);
            // A pod none of them wants: the event moves nothing.
            let mut bystander = Pod::new("b", "bystander", Arc::new(PodSpecInfo::default()));
            bystander.labels = Arc::new(Labels::from_pairs([("app", "nobody")]));
            bystander.node_name = Some(Sym::new("n1"));
            let bystander = Arc::new(bystander);
            g.bench_function(BenchmarkId::new("indexed", parked), |b| {
                b.iter(|| q.assigned_pod_added(bystander.clone(), None))
            });
            // kube's pre-filter: every parked pod's terms checked against the added pod.
            g.bench_function(BenchmarkId::new("scan", parked), |b| {
                b.iter_custom(|iters| {
                    let t = Instant::now();
                    for _ in 0..iters {
                        let n = all
                            .iter()
                            .filter(|p| {
                                p.spec
                                    .pod_affinity
                                    .required_affinity
                                    .iter()
                                    .any(|t| t.matches_pod(p, &bystander, None))
                            })
                            .count();
                        black_box(n);
                    }
                    t.elapsed()
                })
            });
            assert_eq!(q.counts().unschedulable, parked, "nothing moved");
        }
        g.finish();
    }
}

mod framework {
    //! One scheduling cycle (PreFilter, Filter, PreScore, Score, assume, Reserve, Permit, Bind
    //! inline) with the default profile on 5,000 nodes shaped like scheduler_perf's
    //! node-default, for pods shaped like its pod-default: at the default
    //! `percentageOfNodesToScore` and at 100, on 1 and 2 Filter/Score threads. Prints the p50
    //! and p99 per pod over every cycle timed.
    use criterion::{BenchmarkId, Criterion};
    use std::sync::Arc;
    use std::time::{Duration, Instant};
    use tidegate_engine::NoopClient;
    use tidegate_engine::Registry;
    use tidegate_engine::api::Labels;
    use tidegate_engine::api::Resource;
    use tidegate_engine::api::{Node, Pod, PodSpecInfo, Sym};
    use tidegate_engine::metrics::{ExtensionPoint, Series};
    use tidegate_engine::{Scheduler, SchedulerConfig};

    fn scheduler(nodes: usize, pct: Option<u32>, threads: usize) -> Arc<Scheduler> {
        let cfg = SchedulerConfig {
            parallelism: threads,
            percentage_of_nodes_to_score: pct,
            ..SchedulerConfig::default()
        };
        let s = Scheduler::new(cfg, &Registry::in_tree(), Arc::new(NoopClient), None).unwrap();
        for i in 0..nodes {
            let name = format!("scheduler-perf-{i}");
            let mut n = Node::named(&name);
            n.labels = Arc::new(Labels::from_pairs([
                ("kubernetes.io/hostname", name.as_str()),
                (
                    "topology.kubernetes.io/zone",
                    ["zone1", "zone2", "zone3"][i % 3],
                ),
            ]));
            n.allocatable = Resource {
                milli_cpu: 4000,
                memory: 32 << 30,
                allowed_pod_number: 110,
                ..Resource::default()
            };
            s.on_node_add(Arc::new(n));
        }
        s
    }

    /// The pod-default pod spec.
    fn pod_default() -> Arc<PodSpecInfo> {
        let req = Resource {
            milli_cpu: 100,
            memory: 500 << 20,
            ..Resource::default()
        };
        Arc::new(PodSpecInfo {
            scheduler_name: Sym::new("default-scheduler"),
            requests: req.clone(),
            non_zero_requests: req,
            images: vec![Sym::new("registry.k8s.io/pause:3.10")],
            ..PodSpecInfo::default()
        })
    }

    /// One timed scheduling cycle: the `n`-th pod-default pod added, popped and scheduled.
    fn timed_cycle(s: &Scheduler, spec: &Arc<PodSpecInfo>, n: usize) -> Duration {
        s.on_pod_add(Arc::new(Pod::new("b", &format!("p{n}"), spec.clone())));
        let q = s.queue.try_pop().unwrap();
        let t = Instant::now();
        s.schedule_popped(q);
        t.elapsed()
    }

    /// `framework/speedup/5000nodes/pct100`: the 2-thread speedup at
    /// `percentageOfNodesToScore=100`, measured side by side. A 1-thread and a 2-thread
    /// scheduler take turns, `ROUNDS` rounds of `CYCLES` cycles each; a round's figure is its
    /// median cycle, and the speedup is the median over rounds of (1-thread round median /
    /// the next 2-thread round median). Alternating in short rounds cancels the slow drifts
    /// of a shared machine that make two separate runs incomparable.
    pub fn speedup() {
        const ROUNDS: usize = 40;
        const CYCLES: usize = 300;
        let spec = pod_default();
        let one = scheduler(5000, Some(100), 1);
        let two = scheduler(5000, Some(100), 2);
        let mut n = 0usize;
        let mut round = |s: &Arc<Scheduler>| -> f64 {
            let mut t: Vec<u64> = s.in_pool(|| {
                (0..CYCLES)
                    .map(|_| {
                        n += 1;
                        timed_cycle(s, &spec, n).as_nanos() as u64
                    })
                    .collect()
            });
            t.sort_unstable();
            t[t.len() / 2] as f64 / 1000.0
        };
        // Warm both (caches, the cluster's first pods).
        round(&one);
        round(&two);
        let (mut t1, mut t2, mut ratio) = (Vec::new(), Vec::new(), Vec::new());
        for _ in 0..ROUNDS {
            let a = round(&one);
            let b = round(&two);
            t1.push(a);
            t2.push(b);
            ratio.push(a / b);
        }
        let median = |v: &mut Vec<f64>| {
            v.sort_by(f64::total_cmp);
            v[v.len() / 2]
        };
        let (m1, m2) = (median(&mut t1), median(&mut t2));
        let (q1, q3) = {
            median(&mut ratio);
            (ratio[ratio.len() / 4], ratio[ratio.len() * 3 / 4])
        };
        println!(
            "framework/speedup/5000nodes/pct100: 1 thread p50 {m1:.1} µs, 2 threads p50 {m2:.1} µs, \
             speedup {:.2} (median of {ROUNDS} paired rounds; quartiles {q1:.2}..{q3:.2})",
            ratio[ratio.len() / 2]
        );
    }

    pub fn bench(c: &mut Criterion) {
        if !crate::selected("framework") {
            return;
        }
        if crate::selected_path("framework/speedup") {
            speedup();
        }
        let spec = pod_default();
        let mut g = c.benchmark_group("framework");
        g.sample_size(10);
        g.warm_up_time(Duration::from_millis(300));
        g.measurement_time(Duration::from_secs(2));
        for (label, pct) in [("default-pct", None), ("pct100", Some(100))] {
            for threads in [1usize, 2] {
                let s = scheduler(5000, pct, threads);
                let mut hist = hdrhistogram::Histogram::<u64>::new(3).unwrap();
                let mut n = 0usize;
                let id = format!("cycle/5000nodes/{label}/{threads}threads");
                g.bench_function(BenchmarkId::new(id.clone(), 5000), |b| {
                    b.iter_custom(|iters| {
                        s.in_pool(|| {
                            let mut total = Duration::ZERO;
                            for _ in 0..iters {
                                n += 1;
                                let d = timed_cycle(&s, &spec, n);
                                let _ = hist.record(d.as_nanos() as u64);
                                total += d;
                            }
                            total
                        })
                    })
                });
                if hist.is_empty() {
                    continue; // filtered out
                }
                // The Filter and Score phases as the engine's own metrics saw them.
                let phases: Vec<String> = s
                    .metrics()
                    .histograms()
                    .into_iter()
                    .filter_map(|h| match h.series {
                        Series::ExtensionPoint(p, _)
                            if matches!(p, ExtensionPoint::Filter | ExtensionPoint::Score) =>
                        {
                            Some(format!(
                                "{} p50 {:.1} µs",
                                p.as_str(),
                                h.exact_quantile(0.5) * 1e6
                            ))
                        }
                        _ => None,
                    })
                    .collect();
                println!(
                    "framework/{id}: p50 {:.1} µs, p99 {:.1} µs over {} cycles ({})",
                    hist.value_at_quantile(0.5) as f64 / 1000.0,
                    hist.value_at_quantile(0.99) as f64 / 1000.0,
                    hist.len(),
                    phases.join(", ")
                );
            }
        }
        g.finish();
    }
}

/// criterion's [`Profiler`](criterion::profiler::Profiler) hook with pprof: under
/// `cargo bench … -- --profile-time 10`, each benchmark is sampled (997 Hz) while criterion
/// runs it and its flamegraph is written to `target/criterion/<benchmark>/profile/flamegraph.svg`
/// (inferno). pprof's own criterion feature targets criterion 0.5; this is the 0.8 adapter.
mod flamegraph_profiler {
    use std::path::Path;

    #[derive(Default)]
    pub struct FlamegraphProfiler {
        guard: Option<pprof::ProfilerGuard<'static>>,
    }

    impl criterion::profiler::Profiler for FlamegraphProfiler {
        fn start_profiling(&mut self, _id: &str, _dir: &Path) {
            self.guard = pprof::ProfilerGuardBuilder::default()
                .frequency(997)
                .build()
                .ok();
        }

        fn stop_profiling(&mut self, id: &str, dir: &Path) {
            let Some(report) = self.guard.take().and_then(|g| g.report().build().ok()) else {
                return;
            };
            if let Err(e) = std::fs::create_dir_all(dir) {
                eprintln!("{id}: {}: {e}", dir.display());
                return;
            }
            let path = dir.join("flamegraph.svg");
            match std::fs::File::create(&path) {
                Ok(f) => match report.flamegraph(f) {
                    Ok(()) => eprintln!("{id}: flamegraph {}", path.display()),
                    Err(e) => eprintln!("{id}: {}: {e}", path.display()),
                },
                Err(e) => eprintln!("{id}: {}: {e}", path.display()),
            }
        }
    }
}

mod cel {
    //! DRA device selectors over one slice of 64 devices shaped like scheduler_perf's test
    //! driver (a `family` attribute, a `memory` capacity), each selector on every device: by
    //! the CEL interpreter (each device's CEL value already built, as in a run after its first
    //! cycle) and over the slice's attribute columns (already laid out). The `cold` cases
    //! start from a fresh copy of the slice: the interpreter builds every device's value,
    //! the columns are laid out once.
    use criterion::{BenchmarkId, Criterion};
    use tidegate_engine::api::dra::{ResourceSlice, resource_slice};
    use tidegate_engine::bench_support::SelectorBench;

    const DRIVER: &str = "test-driver.cdi.k8s.io";

    fn slice(devices: usize) -> ResourceSlice {
        let devices: Vec<serde_json::Value> = (0..devices)
            .map(|i| {
                serde_json::json!({
                    "name": format!("device-{i}"),
                    "attributes": {
                        "family": {"string": if i % 2 == 0 { "GPU" } else { "FPGA" }},
                        "index": {"int": i},
                        "preallocate": {"bool": i % 3 == 0},
                    },
                    "capacity": {
                        "memory": {"value": if i % 4 == 0 { "2Gi" } else { "1Gi" }},
                        "counters": {"value": format!("{}", i % 5)},
                    },
                })
            })
            .collect();
        let k = serde_json::from_value(serde_json::json!({
            "apiVersion": "resource.k8s.io/v1",
            "kind": "ResourceSlice",
            "metadata": {"name": "node-0-slice"},
            "spec": {
                "driver": DRIVER,
                "nodeName": "node-0",
                "pool": {"name": "node-0", "generation": 1, "resourceSliceCount": 1},
                "devices": devices,
            },
        }))
        .expect("a well-formed slice");
        resource_slice(&k).expect("a valid slice")
    }

    pub fn bench(c: &mut Criterion) {
        if !crate::selected("cel") {
            return;
        }
        let exprs = [
            ("driver", format!("device.driver == \"{DRIVER}\"")),
            (
                "memory-and-family",
                format!(
                    "device.capacity['{DRIVER}'].memory.compareTo(quantity('1Gi')) == 0 && \
                     device.attributes['{DRIVER}'].family == 'GPU'"
                ),
            ),
            (
                "counters-and-preallocate",
                format!(
                    "device.capacity['{DRIVER}'].counters.compareTo(quantity('2')) >= 0 && \
                     device.attributes['{DRIVER}'].preallocate"
                ),
            ),
        ];
        let sel = SelectorBench::default();
        let warm = slice(64);
        let mut g = c.benchmark_group("cel");
        for (name, e) in &exprs {
            let by_interpreter = sel.interpret(e, &warm);
            assert_eq!(sel.columns(e, &warm), Some(by_interpreter), "{name}");
            g.bench_with_input(BenchmarkId::new("interpreter", name), e, |b, e| {
                b.iter(|| sel.interpret(e, &warm))
            });
            g.bench_with_input(BenchmarkId::new("columns", name), e, |b, e| {
                b.iter(|| sel.columns(e, &warm))
            });
            g.bench_with_input(BenchmarkId::new("interpreter-cold", name), e, |b, e| {
                b.iter_batched(
                    || warm.clone(),
                    |s| sel.interpret(e, &s),
                    criterion::BatchSize::SmallInput,
                )
            });
            g.bench_with_input(BenchmarkId::new("columns-cold", name), e, |b, e| {
                b.iter_batched(
                    || warm.clone(),
                    |s| sel.columns(e, &s),
                    criterion::BatchSize::SmallInput,
                )
            });
        }
        g.finish();
    }
}

criterion_group!(
    name = benches;
    config = criterion::Criterion::default()
        .with_profiler(flamegraph_profiler::FlamegraphProfiler::default());
    targets = queue::bench, gated::bench, events::bench, framework::bench, cel::bench
);
criterion_main!(benches);
