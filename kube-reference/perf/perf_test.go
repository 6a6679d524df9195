// Package perf runs a scheduler_perf workload file through kube's own scheduler_perf
// (k8s.io/kubernetes/test/integration/scheduler_perf at the version go.mod names): an
// in-process kube-apiserver on etcd, the real kube-scheduler, kube's op executor, collectors
// and perf-dash JSON. It is kube's `BenchmarkPerfScheduling` with the workload file and topic
// given as flags instead of fixed per topic folder, so any file `tidegate run` reads can be
// run here unchanged.
//
// Run from the workload file's folder (scheduler_perf resolves template paths against the
// working directory), with etcd on PATH:
//
//	cd SP/misc && PATH=/path/to/etcd-dir:$PATH perf.test -test.run '^$' \
//	    -test.bench 'BenchmarkPerfScheduling/^SchedulingBasic$/^5000Nodes_10000Pods$' \
//	    -test.benchtime 1x -config performance-config.yaml -topic misc -data-items-dir OUT
package perf

import (
	"flag"
	"fmt"
	"os"
	"testing"

	_ "k8s.io/component-base/logs/json/register"
	benchmark "k8s.io/kubernetes/test/integration/scheduler_perf"
)

var (
	configFile = flag.String("config", "performance-config.yaml", "the scheduler_perf workload file (relative to the working directory)")
	topic      = flag.String("topic", "tidegate", "the topic in the data items file name (BenchmarkPerfScheduling_benchmark_<topic>_<time>.json)")
	recordDir  = flag.String("record", "", "write every scheduling attempt, in kube's order, to DIR/<benchmark name>.jsonl (the differential oracle's kube side)")
)

func TestMain(m *testing.M) {
	if err := benchmark.InitTests(); err != nil {
		fmt.Fprintf(os.Stderr, "%v\n", err)
		os.Exit(1)
	}
	flag.Parse()
	if *recordDir == "" {
		os.Exit(m.Run())
	}
	// -record also records the executor's marks (outcome.go): the benchmark's log lines must
	// reach stdout as they are logged, which they do when the run is chatty.
	if err := flag.Set("test.v", "true"); err != nil {
		fmt.Fprintf(os.Stderr, "-record: %v\n", err)
		os.Exit(1)
	}
	stop, err := startTap()
	if err != nil {
		fmt.Fprintf(os.Stderr, "-record: %v\n", err)
		os.Exit(1)
	}
	code := m.Run()
	stop()
	os.Exit(code)
}

func BenchmarkPerfScheduling(b *testing.B) {
	var opts []benchmark.SchedulerPerfOption
	preRun, nodeUpdate := topicHooks(*topic)
	if preRun != nil {
		opts = append(opts, benchmark.WithPreRunFn(preRun))
	}
	var record benchmark.NodeUpdateFn
	if *recordDir != "" {
		record = recordDecisions(*recordDir)
	}
	if nodeUpdate != nil || record != nil {
		// The topic's hook first: the recorder reads the nodes as the scheduler sees them.
		opts = append(opts, benchmark.WithNodeUpdateFn(chainNodeUpdates(nodeUpdate, record)))
	}
	benchmark.RunBenchmarkPerfScheduling(b, *configFile, *topic, nil, opts...)
}
