package perf

import (
	"errors"
	"sort"

	v1 "k8s.io/api/core/v1"
	"k8s.io/klog/v2"
	fwk "k8s.io/kube-scheduler/framework"
	internalcache "k8s.io/kubernetes/pkg/scheduler/backend/cache"
	internalqueue "k8s.io/kubernetes/pkg/scheduler/backend/queue"
	"k8s.io/kubernetes/pkg/scheduler/framework"
)

// Pod groups (KEP-4671, GenericWorkload): kube schedules a group's members together in one
// pod group scheduling cycle (podGroupCycle), which calls SchedulePod for each member (once
// per placement it tries; again in PodGroupPostFilter's simulation), assumes the feasible
// ones in the snapshot as it goes and undoes them, then sends the members to binding or back
// to the queue (FailureHandler) and hands the group back to the queue
// (AddAttemptedPodGroupIfNeeded). The recorder sees the members' attempts through the
// SchedulePod wrapper (tagged with their group), their failures through the FailureHandler
// wrapper, and the cycle's end through groupTap, which writes one "podGroup" line per cycle.
//
// Protocol of the lines, in order: the cycle's "decision" lines (podGroup set); "reverted"
// for a member a decision placed that left the snapshot within the cycle (kube undoing a
// placement); at the end, "reverted" for each member the replay still holds bound that did
// not go to binding, then the "podGroup" line with the result.

// podGroupOf is the pod's group (spec.schedulingGroup.podGroupName), or "".
func podGroupOf(p *v1.Pod) string {
	if p == nil || p.Spec.SchedulingGroup == nil || p.Spec.SchedulingGroup.PodGroupName == nil {
		return ""
	}
	return *p.Spec.SchedulingGroup.PodGroupName
}

// placementOf is the placement the snapshot holds assumed (nil: the whole cluster).
func placementOf(fw framework.Framework) *fwk.Placement {
	if s, ok := fw.SnapshotSharedLister().(interface{ GetPlacement() *fwk.Placement }); ok {
		return s.GetPlacement()
	}
	return nil
}

// groupFailure keeps a member's FailureHandler status for the cycle's "podGroup" line.
// (FailureHandler also runs from a binding goroutine: locked.)
func (r *recorder) groupFailure(p *v1.Pod, st *fwk.Status, ni *fwk.NominatingInfo) {
	var gp GroupPod
	if st != nil {
		gp.Message = st.Message()
		var fitErr *framework.FitError
		if err := st.AsError(); err != nil && errors.As(err, &fitErr) {
			gp.Plugins = sorted(fitErr.Diagnosis.UnschedulablePlugins.UnsortedList())
		} else if st.Plugin() != "" {
			gp.Plugins = []string{st.Plugin()}
		}
	}
	if ni.Mode() == fwk.ModeOverride {
		gp.Nominated = ni.NominatedNodeName
	}
	r.mu.Lock()
	r.groupPods[p.Namespace+"/"+p.Name] = gp
	r.mu.Unlock()
}

// groupTap is kube's scheduling queue with AddAttemptedPodGroupIfNeeded observed: the end
// of each pod group cycle (every path of scheduleOnePodGroup ends there).
type groupTap struct {
	internalqueue.SchedulingQueue
	r     *recorder
	cache internalcache.Cache
}

func (q *groupTap) AddAttemptedPodGroupIfNeeded(logger klog.Logger, pgInfo *framework.QueuedPodGroupInfo, schedulingCycle int64, status *fwk.Status) error {
	q.r.groupEnd(q.cache, pgInfo, status)
	return q.SchedulingQueue.AddAttemptedPodGroupIfNeeded(logger, pgInfo, schedulingCycle, status)
}

// groupEnd writes the "podGroup" line of a cycle that ends now (on the scheduling goroutine,
// after the members went to binding or back to the queue).
func (r *recorder) groupEnd(cache internalcache.Cache, pgInfo *framework.QueuedPodGroupInfo, status *fwk.Status) {
	res := &GroupResult{Code: status.Code().String(), Pods: map[string]GroupPod{}}
	if pgInfo.PodGroup != nil {
		res.PodGroup = pgInfo.PodGroup.DeepCopy()
		res.PodGroup.ManagedFields = nil // the API server's bookkeeping: noise in the record
	}
	if status != nil { // nil is Success
		res.Message, res.Plugin = status.Message(), status.Plugin()
	}
	var members []*v1.Pod
	for _, pis := range pgInfo.QueuedPodInfos {
		for _, pi := range pis {
			members = append(members, pi.Pod)
		}
	}
	sort.Slice(members, func(i, j int) bool { return members[i].Name < members[j].Name })
	cached := map[string]*v1.Pod{}
	r.mu.Lock()
	for _, p := range members {
		key := p.Namespace + "/" + p.Name
		gp, failed := r.groupPods[key]
		delete(r.groupPods, key)
		if !failed {
			// Not handed back to the queue: sent to binding, assumed in the cache.
			if c, err := cache.GetPod(p); err == nil && c.Spec.NodeName != "" {
				gp.Node = c.Spec.NodeName
				cached[key] = c
			}
		}
		res.Pods[p.Name] = gp
	}
	r.mu.Unlock()
	// Bring the replay to where kube's next snapshot will be: a member the replay holds
	// bound (a decision placed it, or a snapshot held it assumed) elsewhere than where it
	// went to binding, or not sent to binding at all, was undone ("reverted"); a member sent
	// to binding on another node than the replay's last placement of it (kube tried several
	// placements and chose an earlier one) is then "assigned" there.
	for _, p := range members {
		key := p.Namespace + "/" + p.Name
		held := ""
		if a := r.assigned[key]; a != nil {
			held = a.Spec.NodeName
		} else if d, ok := r.decided[key]; ok {
			held = d.Node
		}
		node := res.Pods[p.Name].Node
		if held == node {
			continue
		}
		if held != "" {
			r.write(Decision{Kind: "reverted", Namespace: p.Namespace, Name: p.Name, Node: held, PodGroup: podGroupOf(p)})
			delete(r.assigned, key)
			delete(r.decided, key)
		}
		if c := cached[key]; c != nil {
			r.write(Decision{Kind: "assigned", Namespace: p.Namespace, Name: p.Name, Node: node, Pod: c})
			r.assigned[key] = c
		}
	}
	r.inCycle = map[string]bool{}
	r.cycleOpen, r.simulating = false, false
	r.write(Decision{Kind: "podGroup", Namespace: pgInfo.Namespace, Name: pgInfo.Name, PodGroup: pgInfo.Name, Group: res})
}
