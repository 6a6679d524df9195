package perf

import (
	"context"
	"reflect"
	"sort"

	v1 "k8s.io/api/core/v1"
	corev1 "k8s.io/component-helpers/scheduling/corev1"
	fwk "k8s.io/kube-scheduler/framework"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// smallCluster: up to this many nodes, an evaluation keeps every node's verdict (each
// feasible node's plugin scores, each rejected node's plugin); above it, the scores of the
// top nodes and of kube's choice only, so that records of 5,000-node workloads stay small.
const smallCluster = 64

// Evaluation is kube's Filter and Score over every node for one attempt, on the snapshot
// the attempt used, as a cycle with `percentageOfNodesToScore: 100` computes them: what
// tidegate's `Scheduler::evaluate` computes on its side, so the replay compares the two
// exactly (feasible count, top set and, for the nodes recorded, each plugin's score),
// whatever node window kube's own attempt used.
type Evaluation struct {
	// PreFilter: the plugin whose PreFilter rejected the pod (then nothing else is set).
	PreFilter string `json:"preFilter,omitempty"`
	// Feasible: how many nodes passed Filter.
	Feasible int `json:"feasible"`
	// Top: the feasible nodes with the highest total score, sorted; TopScore their total.
	Top      []string `json:"top,omitempty"`
	TopScore int64    `json:"topScore,omitempty"`
	// Scores: node -> plugin -> normalized weighted score, with "total" (every feasible
	// node in a small cluster; else the top nodes and kube's choice).
	Scores map[string]map[string]int64 `json:"scores,omitempty"`
	// Rejected: node -> the plugin that rejected it (small clusters only).
	Rejected map[string]string `json:"rejected,omitempty"`
	// ScoreError: a PreScore or Score failure.
	ScoreError string `json:"scoreError,omitempty"`
	// Pods: node -> the pods its NodeInfo holds, as "namespace/name" (small clusters only):
	// the replay checks that its state holds the same ones before judging plugins.
	Pods map[string][]string `json:"pods,omitempty"`
	// Nominated: node -> the nominated pods kube's nominator gave Filter for that node, for
	// every node with any (always written, so that an empty map says "none"): the replay
	// checks its own nominator against it, since Filter counts these pods.
	Nominated map[string][]NominatedPod `json:"nominated"`
}

// NominatedPod is one pod as kube's NominatedPodsForNode returned it.
type NominatedPod struct {
	Pod      string `json:"pod"`
	Priority int32  `json:"priority"`
	// Placeholder: kube's nominator keeps only a reference (name, namespace, UID) and looks
	// the object up in its queues; a pod in none of them (being scheduled or bound, or
	// between queues) comes back as that bare reference, with no containers and no priority,
	// and Filter counts it as such (priority 0 takes part in every pass; it requests nothing).
	Placeholder bool `json:"placeholder,omitempty"`
}

// nominatedPods is what fw's nominator gives Filter for each node, now.
func nominatedPods(fw framework.Framework, nodes []fwk.NodeInfo) map[string][]NominatedPod {
	out := map[string][]NominatedPod{}
	for _, n := range nodes {
		for _, pi := range fw.NominatedPodsForNode(n.Node().Name) {
			p := pi.GetPod()
			out[n.Node().Name] = append(out[n.Node().Name], NominatedPod{
				Pod:         p.Namespace + "/" + p.Name,
				Priority:    corev1.PodPriority(p),
				Placeholder: len(p.Spec.Containers) == 0,
			})
		}
	}
	return out
}

// evaluate runs PreFilter, Filter (with the nominated pods, on the PreFilter result's
// nodes), PreScore and Score for pod on fw's current snapshot with a fresh cycle state.
// chosen is kube's node for this attempt ("" when it failed): its scores are kept.
//
// kube's nominator is live: binding cycles' NominatedNodeNameForExpectation updates reach
// it while Filter runs, so the nominated pods recorded and those Filter counted could
// differ. The evaluation is redone until the nominator gave the same pods before and after
// it (a few tries), so that the record holds what Filter saw.
func evaluate(ctx context.Context, fw framework.Framework, pod *v1.Pod, chosen string) *Evaluation {
	nodes, err := fw.SnapshotSharedLister().NodeInfos().List()
	if err != nil {
		return &Evaluation{ScoreError: err.Error()}
	}
	var out *Evaluation
	for try := 0; try < 5; try++ {
		out = evaluateOnce(ctx, fw, pod, chosen, nodes)
		if reflect.DeepEqual(out.Nominated, nominatedPods(fw, nodes)) {
			break
		}
	}
	return out
}

// evaluateOnce is one try of evaluate.
func evaluateOnce(ctx context.Context, fw framework.Framework, pod *v1.Pod, chosen string, nodes []fwk.NodeInfo) *Evaluation {
	small := len(nodes) <= smallCluster
	state := framework.NewCycleState()
	out := &Evaluation{Nominated: nominatedPods(fw, nodes)}
	pre, st, _ := fw.RunPreFilterPlugins(ctx, state, pod)
	if !st.IsSuccess() {
		out.PreFilter = st.Plugin()
		return out
	}
	if small {
		out.Rejected = map[string]string{}
		out.Pods = map[string][]string{}
		for _, n := range nodes {
			keys := []string{}
			for _, pi := range n.GetPods() {
				keys = append(keys, pi.GetPod().Namespace+"/"+pi.GetPod().Name)
			}
			sort.Strings(keys)
			out.Pods[n.Node().Name] = keys
		}
	}
	var feasible []fwk.NodeInfo
	for _, n := range nodes {
		name := n.Node().Name
		if !pre.AllNodes() && !pre.NodeNames.Has(name) {
			if small {
				out.Rejected[name] = "PreFilterResult"
			}
			continue
		}
		if st := fw.RunFilterPluginsWithNominatedPods(ctx, state, pod, n); !st.IsSuccess() {
			if small {
				out.Rejected[name] = st.Plugin()
			}
			continue
		}
		feasible = append(feasible, n)
	}
	out.Feasible = len(feasible)
	if len(feasible) == 0 {
		return out
	}
	if st := fw.RunPreScorePlugins(ctx, state, pod, feasible); !st.IsSuccess() {
		out.ScoreError = st.Message()
		return out
	}
	scores, st := fw.RunScorePlugins(ctx, state, pod, feasible)
	if !st.IsSuccess() {
		out.ScoreError = st.Message()
		return out
	}
	for i, s := range scores {
		if i == 0 || s.TotalScore > out.TopScore {
			out.TopScore = s.TotalScore
		}
	}
	keep := map[string]bool{}
	for _, s := range scores {
		if s.TotalScore == out.TopScore {
			out.Top = append(out.Top, s.Name)
			if len(keep) < 8 {
				keep[s.Name] = true
			}
		}
	}
	sort.Strings(out.Top)
	keep[chosen] = true
	out.Scores = map[string]map[string]int64{}
	for _, s := range scores {
		if !small && !keep[s.Name] {
			continue
		}
		m := map[string]int64{"total": s.TotalScore}
		for _, p := range s.Scores {
			m[p.Name] = p.Score
		}
		out.Scores[s.Name] = m
	}
	return out
}
