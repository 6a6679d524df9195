package perf

import (
	"context"
	"encoding/json"
	"errors"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"time"

	v1 "k8s.io/api/core/v1"
	schedulingv1beta1 "k8s.io/api/scheduling/v1beta1"
	"k8s.io/apimachinery/pkg/api/equality"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	utilfeature "k8s.io/apiserver/pkg/util/feature"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler"
	"k8s.io/kubernetes/pkg/scheduler/framework"
	benchmark "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"
)

// Decision is one scheduling attempt as kube made it, in the order kube made them: the
// kube side of the differential oracle. tidegate replays the attempts in this order on the
// same cluster state and checks each decision.
type Decision struct {
	// Kind: "decision" (a scheduling attempt), "nodes" (node objects, in Nodes), "nodeDeleted" (Name),
	// "deleted" (an assigned pod that left the scheduler's snapshot: Namespace, Name, its
	// Node and Priority), "assigned" (an assigned pod that entered the snapshot without a
	// recorded decision, with Pod), "nominated" (after a failed attempt, the node kube's
	// PostFilter nominated for the pod, in Node: preemption; an empty Node clears the pod's
	// nomination), "nominationLost" (a nomination kube's nominator dropped because an
	// API write removed the pod's status.nominatedNodeName; Node: the node it had) or
	// "expectation" (a nomination kube's nominator holds that no line gave: the binding
	// cycle's status.nominatedNodeName, NominatedNodeNameForExpectation, which reaches the
	// nominator by the pod's update once the pod is back in the queue; Node: its node).
	Kind      string `json:"kind"`
	Seq       int    `json:"seq"`
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	// Attempts: the pod's attempt count at this attempt (1 for the first).
	Attempts int `json:"attempts"`
	// Node: the node kube chose; empty when the attempt failed.
	Node           string `json:"node,omitempty"`
	EvaluatedNodes int    `json:"evaluatedNodes,omitempty"`
	FeasibleNodes  int    `json:"feasibleNodes,omitempty"`
	// NumAllNodes, UnschedulablePlugins and Error: a failed attempt (a fit error's
	// diagnosis, or another error's message).
	NumAllNodes          int      `json:"numAllNodes,omitempty"`
	UnschedulablePlugins []string `json:"unschedulablePlugins,omitempty"`
	Error                string   `json:"error,omitempty"`
	// Kube: kube's own Filter and Score over every node on the snapshot this attempt used
	// (see Evaluation), whatever node window the attempt itself used.
	Kube *Evaluation `json:"kube,omitempty"`
	// Priority: a deleted pod's priority (preemption victims are judged by it).
	Priority *int32 `json:"priority,omitempty"`
	// Pod: the pod object as the scheduler saw it, on its first attempt and whenever it
	// changed since (later attempts of an unchanged pod refer to it by name).
	Pod *v1.Pod `json:"pod,omitempty"`
	// Nodes: on a "nodes" line, the node objects that are new or changed since the last one.
	Nodes []v1.Node `json:"nodes,omitempty"`
	// NamespaceLabels: the labels of the pod's namespace, with the first pod seen in it
	// (namespaceSelector terms read them).
	NamespaceLabels map[string]string `json:"namespaceLabels,omitempty"`
	// NamespaceServices: the selectors of the Services in the pod's namespace, with the first
	// pod seen in it (PodTopologySpread's system default constraints read them).
	NamespaceServices []map[string]string `json:"namespaceServices,omitempty"`
	// Op: on an "op" line, a mark of kube's op executor with the pod counts its informer
	// held then; on the "outcome" line (the workload's last), the counts at its end
	// (outcome.go).
	Op *OpMark `json:"op,omitempty"`
	// Completed: on the "outcome" line, whether the workload ran every op.
	Completed *bool `json:"completed,omitempty"`
	// Gates: on the "gates" line (a record's first), the feature gates the workload set to
	// other than their defaults, so that the replay schedules with the same ones.
	Gates map[string]bool `json:"gates,omitempty"`
	// PodGroup: on a "decision" made inside a pod group scheduling cycle (kube's
	// podGroupCycle runs SchedulePod for each member, once per placement it tries, and again
	// in PodGroupPostFilter's simulation), the pod's group; on a "nominated" line, the
	// nominated pod's group (group preemption); on a "podGroup" or "reverted" line, the group.
	PodGroup string `json:"podGroup,omitempty"`
	// DRA: on a "dra" line, the DRA objects new, changed or gone since the last one, and
	// the in-flight allocations (dra.go).
	DRA *DRAState `json:"dra,omitempty"`
	// Volumes: on a "volumes" line, the volume objects new, changed or gone since the last
	// one (volumes.go).
	Volumes *VolumeState `json:"volumes,omitempty"`
	// Group: on a "podGroup" line (the end of a pod group scheduling cycle), its result.
	Group *GroupResult `json:"group,omitempty"`
	// Simulation: a "decision" made in PodGroupPostFilter's simulation (group preemption),
	// on a snapshot without the potential victims ("simulated" lines before it).
	Simulation bool `json:"simulation,omitempty"`
	// Placement: on a "decision" inside a pod group cycle that tried a placement narrower
	// than the cluster (TopologyPlacement: one topology domain), its name and nodes: the
	// attempt filtered and scored those alone (its fit error's node count is theirs).
	Placement     string   `json:"placement,omitempty"`
	PlacementNode []string `json:"placementNodes,omitempty"`
}

// GroupResult is the end of one pod group scheduling cycle, as kube's
// submitPodGroupAlgorithmResult left it (written when it hands the group back to the queue,
// AddAttemptedPodGroupIfNeeded): the root status and, for each member the cycle took, whether
// it went to binding (its node, read from the scheduler's cache, which holds the assumed pod)
// or back to the queue with the status FailureHandler received.
type GroupResult struct {
	// Code: the root status's code (Success, Unschedulable, UnschedulableAndUnresolvable,
	// Error, ...); Message its message (the PodGroupInitiallyScheduled condition's message
	// kube patches for a leaf group); Plugin the plugin that set it, if any.
	Code    string `json:"code"`
	Message string `json:"message,omitempty"`
	Plugin  string `json:"plugin,omitempty"`
	// Pods: each member the cycle took, by name.
	Pods map[string]GroupPod `json:"pods"`
	// PodGroup: the group's object as the cycle read it (its policy, minCount, topology
	// constraints, priority).
	PodGroup *schedulingv1beta1.PodGroup `json:"podGroupObject,omitempty"`
}

// GroupPod is one member's end of a pod group cycle.
type GroupPod struct {
	// Node: where it went to binding ("" when it went back to the queue).
	Node string `json:"node,omitempty"`
	// Plugins and Message: the status FailureHandler received (a fit error's unschedulable
	// plugins; the group's message when the group, not the pod, was rejected).
	Plugins []string `json:"plugins,omitempty"`
	Message string   `json:"message,omitempty"`
	// Nominated: the node the group's PostFilter (group preemption) nominated for it.
	Nominated string `json:"nominated,omitempty"`
}

// recorder writes the decisions of one workload's scheduler, one JSON line each.
type recorder struct {
	mu  sync.Mutex
	seq int
	enc *json.Encoder
	// namespaceLabels looks a namespace's labels up (the first time each is seen).
	namespaceLabels func(ctx context.Context, namespace string) map[string]string
	seen            map[string]bool
	// namespaceServices lists a namespace's Service selectors (the first time it is seen).
	namespaceServices func(ctx context.Context, namespace string) []map[string]string
	// nodeVersions and podVersions: the resourceVersion last written of each object.
	nodeVersions map[string]string
	podVersions  map[string]string
	// assigned: the assigned pods of the last attempt's snapshot; decided: the pods bound
	// by recorded decisions since (they enter the next snapshot without an "assigned" line).
	// Both are used by the scheduling goroutine only.
	assigned map[string]*v1.Pod
	decided  map[string]Decision
	// nominated: the pods holding a nomination kube's PostFilter gave (failure handler), and
	// the node of each.
	nominated     map[string]bool
	nominatedNode map[string]string
	// pods: the executor's pod counts (outcome.go); failed: a "failed" mark was seen.
	pods   *podCounter
	failed bool
	// inCycle: the pods a pod group cycle in progress assumed in the snapshot (a decision
	// with a node); one that leaves the snapshot is written "reverted", not "deleted" (kube
	// undoes a placement it tried, or the whole group). groupPods: the members'
	// FailureHandler statuses in the cycle in progress. Scheduling goroutine only.
	inCycle   map[string]bool
	groupPods map[string]GroupPod
	// cycleOpen: a pod group cycle has made an attempt (its snapshot is not updated again
	// until it ends); simulating: within it, assigned pods left the snapshot, which only
	// PodGroupPostFilter's simulation does (DefaultPreemption removes the potential victims
	// in a mutation session): its attempts are marked, and those pods written "simulated".
	cycleOpen, simulating bool
	// dra: what of the DRA objects was last written (dra.go).
	dra draVersions
	// volumes: the resourceVersion last written of each volume object, by
	// "kind/namespace/name" (volumes.go).
	volumes map[string]string
}

// changedNodes writes a "nodes" line with the nodes that are new or changed since the last.
func (r *recorder) changedNodes(nodes []v1.Node) {
	var changed []v1.Node
	r.mu.Lock()
	for _, n := range nodes {
		if r.nodeVersions[n.Name] != n.ResourceVersion {
			r.nodeVersions[n.Name] = n.ResourceVersion
			changed = append(changed, n)
		}
	}
	r.mu.Unlock()
	if len(changed) > 0 {
		r.write(Decision{Kind: "nodes", Nodes: changed})
	}
}

func (r *recorder) record(ctx context.Context, fw framework.Framework, pod *v1.Pod, attempts int, res scheduler.ScheduleResult, err error, eval *Evaluation, inGroupCycle bool) {
	d := Decision{
		Kube:           eval,
		Kind:           "decision",
		Namespace:      pod.Namespace,
		Name:           pod.Name,
		Attempts:       attempts,
		Node:           res.SuggestedHost,
		EvaluatedNodes: res.EvaluatedNodes,
		FeasibleNodes:  res.FeasibleNodes,
	}
	if inGroupCycle {
		d.PodGroup = podGroupOf(pod)
		d.Simulation = r.simulating
		if pl := placementOf(fw); pl != nil {
			d.Placement = pl.Name
			for _, n := range pl.Nodes {
				d.PlacementNode = append(d.PlacementNode, n.Node().Name)
			}
			sort.Strings(d.PlacementNode)
		}
	}
	if err != nil {
		d.Node = ""
		var fitErr *framework.FitError
		if errors.As(err, &fitErr) {
			d.NumAllNodes = fitErr.NumAllNodes
			d.UnschedulablePlugins = sorted(fitErr.Diagnosis.UnschedulablePlugins.UnsortedList())
		}
		d.Error = err.Error()
	}
	r.mu.Lock()
	key := pod.Namespace + "/" + pod.Name
	if r.podVersions[key] != pod.ResourceVersion {
		r.podVersions[key] = pod.ResourceVersion
		d.Pod = pod
	}
	first := !r.seen[pod.Namespace]
	r.seen[pod.Namespace] = true
	r.mu.Unlock()
	if first && r.namespaceLabels != nil {
		d.NamespaceLabels = r.namespaceLabels(ctx, pod.Namespace)
		d.NamespaceServices = r.namespaceServices(ctx, pod.Namespace)
	}
	r.write(d)
}

// nominationsLost writes a "nominationLost" line, before the attempt whose evaluation found
// it, for each pod holding a PostFilter nomination that kube's nominator (view: what it gave
// Filter, node -> pods) no longer has while the pod, still unassigned, carries no
// status.nominatedNodeName: an API write removed it (the preemption executor clearing a
// lower-priority pod's, or a workload's updateAny op replacing the status with its
// template's), and kube's nominator drops the nomination of a pod whose update removes it
// (UpdateNominatedPod). Runs on the scheduling goroutine.
func (r *recorder) nominationsLost(fw framework.Framework, view map[string][]NominatedPod) {
	held := map[string]bool{}
	for _, pods := range view {
		for _, p := range pods {
			held[p.Pod] = true
		}
	}
	lister := fw.SharedInformerFactory().Core().V1().Pods().Lister()
	r.mu.Lock()
	var lost []string
	for key, nominated := range r.nominated {
		if nominated && !held[key] {
			lost = append(lost, key)
		}
	}
	r.mu.Unlock()
	sort.Strings(lost)
	for _, key := range lost {
		ns, name, _ := strings.Cut(key, "/")
		p, err := lister.Pods(ns).Get(name)
		if err != nil || p.Spec.NodeName != "" || p.Status.NominatedNodeName != "" {
			continue // deleted or bound (recorded otherwise), or not dropped for this reason
		}
		r.mu.Lock()
		node := r.nominatedNode[key]
		r.nominated[key] = false
		r.mu.Unlock()
		r.write(Decision{Kind: "nominationLost", Namespace: ns, Name: name, Node: node})
	}
}

// expectations writes an "expectation" line, before the attempt whose evaluation found it,
// for each pod kube's nominator (view: what it gave Filter, node -> pods) holds on a node no
// recorded line nominated it to. With NominatedNodeNameForExpectation (on by default) kube's
// binding cycle patches status.nominatedNodeName to the pod's node before PreBind (when a
// PreBind plugin has work, DynamicResources with claims) or WaitOnPermit. While the pod is
// assumed the queue ignores that update; when PreBind then fails and the informer delivers
// the update only after the failure handler requeued the pod (whose clearing patch found no
// nomination to clear), the queue's Update nominates the pod there, and its next attempt
// tries that node first. Runs on the scheduling goroutine.
func (r *recorder) expectations(view map[string][]NominatedPod) {
	type found struct{ key, node string }
	var gained []found
	r.mu.Lock()
	for node, pods := range view {
		for _, p := range pods {
			if !r.nominated[p.Pod] || r.nominatedNode[p.Pod] != node {
				gained = append(gained, found{p.Pod, node})
				r.nominated[p.Pod] = true
				r.nominatedNode[p.Pod] = node
			}
		}
	}
	r.mu.Unlock()
	sort.Slice(gained, func(i, j int) bool { return gained[i].key < gained[j].key })
	for _, g := range gained {
		ns, name, _ := strings.Cut(g.key, "/")
		r.write(Decision{Kind: "expectation", Namespace: ns, Name: name, Node: g.node})
	}
}

func (r *recorder) write(d Decision) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.seq++
	d.Seq = r.seq
	_ = r.enc.Encode(d)
}

// snapshotChanges writes what changed in the scheduler's snapshot since the last attempt:
// a "nodes" line with the nodes that are new or changed, a "nodeDeleted" line per node that
// left, a "deleted" line for every assigned pod that left (preemption victims, deletePods,
// churn, a failed binding's assumed pod), and an "assigned" line (with the object) for every
// assigned pod that entered it without a recorded decision (a pod created with its node set)
// or whose labels, deletion or resources changed (updateAny on bound pods). The snapshot is
// the state the attempt about to be recorded used, so the replay applies these before it.
func (r *recorder) snapshotChanges(fw framework.Framework, midCycle bool) {
	nodes, err := fw.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return
	}
	objs := make([]v1.Node, 0, len(nodes))
	names := make(map[string]bool, len(nodes))
	for _, n := range nodes {
		objs = append(objs, *n.Node())
		names[n.Node().Name] = true
	}
	r.changedNodes(objs)
	r.draChanges(fw)
	r.volumeChanges(fw)
	r.mu.Lock()
	var gone []string
	for name := range r.nodeVersions {
		if !names[name] {
			gone = append(gone, name)
			delete(r.nodeVersions, name)
		}
	}
	r.mu.Unlock()
	sort.Strings(gone)
	for _, name := range gone {
		r.write(Decision{Kind: "nodeDeleted", Name: name})
	}
	now := make(map[string]*v1.Pod, len(r.assigned))
	for _, n := range nodes {
		for _, pi := range n.GetPods() {
			p := pi.GetPod()
			now[p.Namespace+"/"+p.Name] = p
		}
	}
	for key, p := range r.assigned {
		if _, ok := now[key]; !ok {
			if r.inCycle[key] {
				r.write(Decision{Kind: "reverted", Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, PodGroup: podGroupOf(p)})
				continue
			}
			if midCycle {
				r.simulating = true
				r.write(Decision{Kind: "simulated", Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, Priority: p.Spec.Priority})
				continue
			}
			r.write(Decision{Kind: "deleted", Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, Priority: p.Spec.Priority})
		}
	}
	// A pod bound by a recorded decision that left before any later snapshot held it
	// (deleted while its binding was in flight, or a group member kube assumed and undid).
	for key, d := range r.decided {
		if _, ok := now[key]; !ok {
			if r.inCycle[key] {
				d.Kind, d.Priority = "reverted", nil
			}
			r.write(d)
		}
	}
	keys := make([]string, 0, len(now))
	for key := range now {
		keys = append(keys, key)
	}
	sort.Strings(keys)
	for _, key := range keys {
		p := now[key]
		old, ok := r.assigned[key]
		_, decided := r.decided[key]
		if (!ok && !decided) || (ok && schedulingRelevantChange(old, p)) {
			r.write(Decision{Kind: "assigned", Namespace: p.Namespace, Name: p.Name, Node: p.Spec.NodeName, Pod: p})
		}
	}
	r.assigned = now
	r.decided = map[string]Decision{}
}

// schedulingRelevantChange: what of an assigned pod other pods' scheduling reads changed
// (labels for affinity and spreading, deletion for preemption, container resources).
func schedulingRelevantChange(old, cur *v1.Pod) bool {
	if !equality.Semantic.DeepEqual(old.Labels, cur.Labels) || (old.DeletionTimestamp == nil) != (cur.DeletionTimestamp == nil) {
		return true
	}
	if len(old.Spec.Containers) != len(cur.Spec.Containers) {
		return true
	}
	for i := range old.Spec.Containers {
		if !equality.Semantic.DeepEqual(old.Spec.Containers[i].Resources, cur.Spec.Containers[i].Resources) {
			return true
		}
	}
	return false
}

func sorted(v []string) []string {
	sort.Strings(v)
	return v
}

// recordDecisions returns the node-update hook that wraps each workload's scheduler's SchedulePod, so
// that every attempt is written to dir/<benchmark name>.jsonl. The wrapper is installed when
// the workload's first createNodes op has run, before its pods are created (scheduler_perf's
// files create nodes first); it replaces a field the scheduling goroutine reads, which is
// safe here only because no pod is being scheduled yet. Each attempt's line follows what
// changed in the scheduler's snapshot since the last one (snapshotChanges: nodes, assigned
// pods), so the replay sees exactly the state the attempt used. The labels and Service
// selectors of each pod's namespace are read the first time the namespace is seen. After
// each attempt kube's own Filter and Score run again over every node (evaluate), and
// PostFilter's nominations are written as the failure handler receives them. Not recorded:
// namespace label and Service changes after a namespace's first pod.
func recordDecisions(dir string) benchmark.NodeUpdateFn {
	var mu sync.Mutex
	recorders := map[*scheduler.Scheduler]*recorder{}
	return func(tCtx ktesting.TContext, sched *scheduler.Scheduler, _ *benchmark.Workload, nodes *v1.NodeList) error {
		mu.Lock()
		defer mu.Unlock()
		if _, ok := recorders[sched]; ok {
			return nil
		}
		if err := os.MkdirAll(dir, 0o755); err != nil {
			return err
		}
		name := strings.NewReplacer("/", "_", " ", "_").Replace(tCtx.Name())
		f, err := os.Create(filepath.Join(dir, name+".jsonl"))
		if err != nil {
			return err
		}
		tCtx.Cleanup(func() { _ = f.Close() })
		client := tCtx.Client()
		r := &recorder{
			enc:           json.NewEncoder(f),
			seen:          map[string]bool{},
			nodeVersions:  map[string]string{},
			podVersions:   map[string]string{},
			assigned:      map[string]*v1.Pod{},
			decided:       map[string]Decision{},
			nominated:     map[string]bool{},
			nominatedNode: map[string]string{},
			inCycle:       map[string]bool{},
			groupPods:     map[string]GroupPod{},
			namespaceServices: func(ctx context.Context, namespace string) []map[string]string {
				l, err := client.CoreV1().Services(namespace).List(ctx, metav1.ListOptions{})
				if err != nil {
					return nil
				}
				var out []map[string]string
				for _, s := range l.Items {
					if len(s.Spec.Selector) > 0 {
						out = append(out, s.Spec.Selector)
					}
				}
				return out
			},
			namespaceLabels: func(ctx context.Context, namespace string) map[string]string {
				ns, err := client.CoreV1().Namespaces().Get(ctx, namespace, metav1.GetOptions{})
				if err != nil {
					return nil
				}
				return ns.Labels
			},
		}
		recorders[sched] = r
		r.write(Decision{Kind: "gates", Gates: changedGates()})
		if tap != nil {
			for _, fw := range sched.Profiles {
				if r.pods, err = podCounterFor(fw.SharedInformerFactory().Core().V1().Pods().Informer()); err != nil {
					return err
				}
				break
			}
			// Registered after the file's Close: runs before it.
			tCtx.Cleanup(tap.attach(r))
		}
		inner := sched.SchedulePod
		sched.SchedulePod = func(ctx context.Context, fw framework.Framework, state fwk.CycleState, pi *framework.QueuedPodInfo) (scheduler.ScheduleResult, error) {
			res, err := inner(ctx, fw, state, pi)
			// The snapshot is still the one the attempt used (assume changes the cache):
			// first the nodes and assigned pods it gained, changed or lost, then the attempt.
			inGroupCycle := state.IsPodGroupSchedulingCycle()
			r.snapshotChanges(fw, inGroupCycle && r.cycleOpen)
			r.cycleOpen = r.cycleOpen || inGroupCycle
			chosen := res.SuggestedHost
			if err != nil {
				chosen = ""
			}
			eval := evaluate(ctx, fw, pi.Pod, chosen)
			r.nominationsLost(fw, eval.Nominated)
			r.expectations(eval.Nominated)
			r.record(ctx, fw, pi.Pod, pi.Attempts, res, err, eval, inGroupCycle)
			if chosen != "" {
				key := pi.Pod.Namespace + "/" + pi.Pod.Name
				if inGroupCycle {
					r.inCycle[key] = true
				}
				r.decided[key] = Decision{Kind: "deleted", Namespace: pi.Pod.Namespace, Name: pi.Pod.Name, Node: chosen, Priority: pi.Pod.Spec.Priority, PodGroup: podGroupOf(pi.Pod)}
				r.mu.Lock()
				delete(r.nominated, key) // assumed: kube's nominator lets it go
				r.mu.Unlock()
			}
			return res, err
		}
		failure := sched.FailureHandler
		sched.FailureHandler = func(ctx context.Context, fw framework.Framework, pi *framework.QueuedPodInfo, st *fwk.Status, ni *fwk.NominatingInfo, start time.Time) {
			if group := podGroupOf(pi.Pod); group != "" {
				r.groupFailure(pi.Pod, st, ni)
			}
			if ni.Mode() == fwk.ModeOverride {
				// A nomination, or the clearing of one the pod holds (PostFilter found no
				// candidate): the nominated pods count in later attempts' Filter.
				// (A binding failure calls the handler from the binding goroutine: locked.)
				key := pi.Pod.Namespace + "/" + pi.Pod.Name
				r.mu.Lock()
				held := r.nominated[key]
				r.nominated[key] = ni.NominatedNodeName != ""
				r.nominatedNode[key] = ni.NominatedNodeName
				r.mu.Unlock()
				if ni.NominatedNodeName != "" || held {
					r.write(Decision{Kind: "nominated", Namespace: pi.Pod.Namespace, Name: pi.Pod.Name, Node: ni.NominatedNodeName, PodGroup: podGroupOf(pi.Pod)})
				}
			}
			failure(ctx, fw, pi, st, ni, start)
		}
		sched.SchedulingQueue = &groupTap{SchedulingQueue: sched.SchedulingQueue, r: r, cache: sched.Cache}
		return nil
	}
}

// changedGates: the feature gates whose value differs from their default (the test case's
// and workload's featureGates, as scheduler_perf set them for this run).
func changedGates() map[string]bool {
	out := map[string]bool{}
	for name, spec := range utilfeature.DefaultMutableFeatureGate.GetAll() {
		if on := utilfeature.DefaultFeatureGate.Enabled(name); on != spec.Default {
			out[string(name)] = on
		}
	}
	return out
}
