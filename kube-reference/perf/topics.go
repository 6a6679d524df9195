package perf

import (
	"context"
	"fmt"
	"slices"
	"time"

	v1 "k8s.io/api/core/v1"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"
	"k8s.io/apimachinery/pkg/util/version"
	"k8s.io/apimachinery/pkg/util/wait"
	ndf "k8s.io/component-helpers/nodedeclaredfeatures"
	ndffeatures "k8s.io/component-helpers/nodedeclaredfeatures/features"
	"k8s.io/kubernetes/pkg/features"
	"k8s.io/kubernetes/pkg/scheduler"
	benchmark "k8s.io/kubernetes/test/integration/scheduler_perf"
	"k8s.io/kubernetes/test/utils/client-go/ktesting"
)

// Topic hooks. Some upstream topic folders run scheduler_perf with hooks of their own, set in
// the folder's _test.go file (which cannot be imported). Without them kube fails such a
// workload ("the parameters [...] are defined on workload ..., but unused") or runs it on a
// different cluster. tidegate has the same hooks (bench-harness/src/run/ops/topic_hooks.rs);
// these are kube's side, written for this module, selected by -topic as each folder's
// BenchmarkPerfScheduling selects its own.

// topicHooks returns the pre-run and node-update hooks of a topic (nil where it has none).
func topicHooks(topic string) (benchmark.PreRunFn, benchmark.NodeUpdateFn) {
	switch topic {
	case "nodedeclaredfeatures":
		return declaredFeaturesPreRun, declaredFeaturesNodeUpdate
	}
	return nil, nil
}

// The nodedeclaredfeatures topic (kubernetes v1.37.2,
// test/integration/scheduler_perf/nodedeclaredfeatures/node_declared_features_test.go):
// when the workload turns the NodeDeclaredFeatures gate on, the library's feature registry is
// replaced for the run by numNodeDeclaredFeatures features named Feature1..FeatureN, each of
// which a pod needs when it has pod-level resources (spec.resources); after each createNodes
// every node declares all of them in status.declaredFeatures, and the hook waits until the
// scheduler's cache has seen that.

// podLevelResourcesFeature is one such feature.
type podLevelResourcesFeature struct{ name string }

func (f podLevelResourcesFeature) Name() string                         { return f.name }
func (podLevelResourcesFeature) Discover(*ndf.NodeConfiguration) bool   { return true }
func (podLevelResourcesFeature) Requirements() *ndf.FeatureRequirements { return nil }
func (podLevelResourcesFeature) InferForUpdate(_, _ *ndf.PodInfo) bool  { return false }
func (podLevelResourcesFeature) MaxVersion() *version.Version           { return nil }
func (podLevelResourcesFeature) InferForScheduling(p *ndf.PodInfo) bool {
	return p.Spec != nil && p.Spec.Resources != nil
}

// declaredFeatureNames: Feature1..FeatureN of the workload (none when the gate is off; 0
// when the param is missing, as kube's hook falls back), sorted as strings.
func declaredFeatureNames(w *benchmark.Workload) ([]string, bool) {
	if !w.FeatureGates[features.NodeDeclaredFeatures] {
		return nil, false
	}
	n, err := w.GetParam("numNodeDeclaredFeatures")
	if err != nil {
		n = 0
	}
	names := make([]string, 0, n)
	for i := 1; i <= n; i++ {
		names = append(names, fmt.Sprintf("Feature%d", i))
	}
	slices.Sort(names)
	return names, true
}

func declaredFeaturesPreRun(tCtx ktesting.TContext, w *benchmark.Workload) (func(), error) {
	names, on := declaredFeatureNames(w)
	if !on {
		return func() {}, nil
	}
	registry := make([]ndf.Feature, 0, len(names))
	for _, name := range names {
		registry = append(registry, podLevelResourcesFeature{name: name})
	}
	saved := ndffeatures.AllFeatures
	ndffeatures.AllFeatures = registry
	tCtx.Logf("kube-reference: %d declared features registered for %s", len(names), w.Name)
	return func() { ndffeatures.AllFeatures = saved }, nil
}

func declaredFeaturesNodeUpdate(tCtx ktesting.TContext, sched *scheduler.Scheduler, w *benchmark.Workload, nodes *v1.NodeList) error {
	names, on := declaredFeatureNames(w)
	if !on {
		return nil
	}
	for i := range nodes.Items {
		node := nodes.Items[i].DeepCopy()
		node.Status.DeclaredFeatures = names
		if _, err := tCtx.Client().CoreV1().Nodes().UpdateStatus(tCtx, node, metav1.UpdateOptions{}); err != nil {
			return fmt.Errorf("declaring features on node %s: %w", node.Name, err)
		}
	}
	return wait.PollUntilContextTimeout(tCtx, 100*time.Millisecond, time.Minute, true, func(context.Context) (bool, error) {
		for i := range nodes.Items {
			info, err := sched.Cache.GetNode(nodes.Items[i].Name)
			if err != nil || !slices.Equal(info.Node().Status.DeclaredFeatures, names) {
				return false, nil
			}
		}
		return true, nil
	})
}

// chainNodeUpdates runs each non-nil hook in order (scheduler_perf takes one).
func chainNodeUpdates(fns ...benchmark.NodeUpdateFn) benchmark.NodeUpdateFn {
	return func(tCtx ktesting.TContext, sched *scheduler.Scheduler, w *benchmark.Workload, nodes *v1.NodeList) error {
		for _, fn := range fns {
			if fn == nil {
				continue
			}
			if err := fn(tCtx, sched, w, nodes); err != nil {
				return err
			}
		}
		return nil
	}
}
