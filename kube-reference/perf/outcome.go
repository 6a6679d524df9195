package perf

import (
	"bufio"
	"fmt"
	"io"
	"os"
	"strings"
	"sync"

	"k8s.io/apimachinery/pkg/labels"
	listersv1 "k8s.io/client-go/listers/core/v1"
	"k8s.io/client-go/tools/cache"
)

// Outcomes: what kube's op executor saw, so that the differential also compares outcomes
// (tidegate's `tidegate outcomes`): at each mark of the executor (an op's start, a wait that
// succeeded) the pod counts of its informer, and at the end whether the workload completed.
//
// Protocol. scheduler_perf's executor marks its ops only in its test log (tCtx.Logf, kube
// v1.37.2 test/integration/scheduler_perf/executor.go): "creating N pods in namespace",
// "scheduling succeed" when a wait's poll found enough pods scheduled, and so on. With
// -record, the test binary runs chatty (-test.v), so a benchmark's log lines are written to
// os.Stdout as they are logged, and os.Stdout is a pipe read here (opTap): every line is
// passed on unchanged, and each executor mark becomes an "op" line of the active workload's
// record, with the counts of the pod informer the executor's waits read (the scheduler's
// shared informer) at that instant: pods created (adds seen), scheduled (nodeName set, as
// getScheduledPods counts them: terminating pods included), pending (no nodeName) and
// deleted (deletes seen). A wait's "scheduling succeed" is logged right after the poll that
// succeeded, so its counts are what that poll counted, give or take the events of the
// microseconds between. A failure (ktesting's Fatalf: a "FATAL ERROR:" line, then the
// message, as for the benchmark's "Error running workload" or an op's own "Failed to update
// object") is a "failed" mark with the message. When the workload's test ends, an in-band sync line sent
// through the pipe makes sure every earlier line was read, then an "outcome" line says
// whether the workload completed (no "failed" mark) with the counts then.

// Counts are pod counts as the executor's informer holds them.
type Counts struct {
	Created   int `json:"created"`
	Scheduled int `json:"scheduled"`
	Pending   int `json:"pending"`
	Deleted   int `json:"deleted"`
}

// OpMark is an "op" line's payload: Event is the mark's kind (see markKind), Text the log
// message.
type OpMark struct {
	Event  string `json:"event"`
	Text   string `json:"text"`
	Counts Counts `json:"counts"`
}

// podCounter counts pods from the scheduler's shared pod informer: the lister for the
// pods that exist now (what the executor's waits list), a handler for the deletions.
type podCounter struct {
	lister  listersv1.PodLister
	mu      sync.Mutex
	deleted int
}

func newPodCounter(informer cache.SharedIndexInformer, lister listersv1.PodLister) (*podCounter, error) {
	c := &podCounter{lister: lister}
	_, err := informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		DeleteFunc: func(any) {
			c.mu.Lock()
			c.deleted++
			c.mu.Unlock()
		},
	})
	return c, err
}

func (c *podCounter) counts() Counts {
	pods, _ := c.lister.List(labels.Everything())
	var n Counts
	for _, p := range pods {
		if p.Spec.NodeName != "" {
			n.Scheduled++
		} else {
			n.Pending++
		}
	}
	c.mu.Lock()
	n.Deleted = c.deleted
	c.mu.Unlock()
	n.Created = n.Scheduled + n.Pending + n.Deleted
	return n
}

// markKind classifies one line of the test log: the executor's marks (kube v1.37.2's
// messages), "" for any other line.
func markKind(line string) string {
	msg := line
	// "    executor.go:731: creating 20 pods in namespace ..." (the call site, then the text).
	if i := strings.Index(msg, ".go:"); i >= 0 {
		if j := strings.Index(msg[i:], ": "); j >= 0 {
			msg = msg[i+j+2:]
		}
	}
	switch {
	case strings.HasPrefix(msg, "creating pods in namespace "):
		return "steadyState"
	case strings.HasPrefix(msg, "creating ") && strings.Contains(msg, " pods in namespace "):
		return "createPods"
	case strings.HasPrefix(msg, "Completed after seeing "):
		return "steadyStateEnd"
	case msg == "scheduling succeed":
		return "scheduled"
	case msg == "all pods attempted to be scheduled":
		return "attempted"
	case strings.HasPrefix(msg, "Making ") && strings.Contains(msg, " namespaces with prefix "):
		return "createNamespaces"
	case strings.HasPrefix(msg, "Started metrics collection ("):
		return "startMetrics"
	case strings.HasPrefix(msg, "Stopped metrics collection ("):
		return "stopMetrics"
	case strings.HasPrefix(msg, "Creating ") && strings.Contains(msg, " pod sets"):
		return "createPodSets"
	case strings.Contains(msg, "Error running workload "):
		return "failed"
	case strings.HasPrefix(msg, "FATAL ERROR"):
		// ktesting's Fatalf: "FATAL ERROR:" then the message on the next line. An op that
		// fails by itself (updateAny's "Failed to update object") logs only this.
		return "fatal"
	}
	return ""
}

// opTap reads the process's stdout (a pipe) and routes the executor's marks to the active
// workload's recorder.
type opTap struct {
	mu     sync.Mutex
	active *recorder
	syncs  map[string]chan struct{}
	nsync  int
	out    *os.File // the pipe's write end (os.Stdout)
}

var tap *opTap

const syncPrefix = "\x00tidegate-record-sync "

// startTap replaces os.Stdout by a pipe whose lines are copied to the real stdout and read
// for marks. The returned stop closes the pipe, waits until every line is copied and puts
// the real stdout back.
func startTap() (stop func(), err error) {
	real := os.Stdout
	r, w, err := os.Pipe()
	if err != nil {
		return nil, err
	}
	t := &opTap{syncs: map[string]chan struct{}{}, out: w}
	done := make(chan struct{})
	go func() {
		defer close(done)
		t.copyLines(bufio.NewReader(r), real)
	}()
	os.Stdout = w
	tap = t
	return func() {
		os.Stdout = real
		_ = w.Close()
		<-done
	}, nil
}

func (t *opTap) copyLines(r *bufio.Reader, real io.Writer) {
	fatal := false
	for {
		line, err := r.ReadString('\n')
		if key, ok := strings.CutPrefix(line, syncPrefix); ok {
			t.mu.Lock()
			if ch := t.syncs[strings.TrimSpace(key)]; ch != nil {
				close(ch)
			}
			t.mu.Unlock()
		} else if line != "" {
			_, _ = io.WriteString(real, line)
			kind := markKind(strings.TrimSpace(line))
			if fatal {
				// The message of the "FATAL ERROR:" line before: the failure, marked once.
				kind, fatal = "failed", false
			} else if kind == "fatal" {
				kind, fatal = "", true
			}
			if kind != "" {
				t.mu.Lock()
				r := t.active
				t.mu.Unlock()
				if r != nil && r.pods != nil {
					if kind == "failed" {
						r.mu.Lock()
						r.failed = true
						r.mu.Unlock()
					}
					r.write(Decision{Kind: "op", Op: &OpMark{Event: kind, Text: strings.TrimSpace(line), Counts: r.pods.counts()}})
				}
			}
		}
		if err != nil {
			return
		}
	}
}

// sync returns once every line written to the pipe before it was read.
func (t *opTap) sync() {
	t.mu.Lock()
	t.nsync++
	key := fmt.Sprint(t.nsync)
	ch := make(chan struct{})
	t.syncs[key] = ch
	t.mu.Unlock()
	if _, err := fmt.Fprintf(t.out, "%s%s\n", syncPrefix, key); err == nil {
		<-ch
	}
	t.mu.Lock()
	delete(t.syncs, key)
	t.mu.Unlock()
}

// attach makes r the workload whose marks are recorded; the returned function writes its
// "outcome" line (after every earlier line of the log was read) and detaches it.
func (t *opTap) attach(r *recorder) func() {
	t.mu.Lock()
	t.active = r
	t.mu.Unlock()
	return func() {
		t.sync()
		t.mu.Lock()
		t.active = nil
		t.mu.Unlock()
		r.writeOutcome()
	}
}

// writeOutcome writes the "outcome" line: completed unless a "failed" mark was recorded.
func (r *recorder) writeOutcome() {
	if r.pods == nil {
		return
	}
	r.mu.Lock()
	failed := r.failed
	r.mu.Unlock()
	completed := !failed
	r.write(Decision{Kind: "outcome", Completed: &completed, Op: &OpMark{Event: "end", Counts: r.pods.counts()}})
}

// podCounterFor the scheduler's shared pod informer (the executor's podInformer is the
// same: both come from the informer factory scheduler_perf starts the scheduler with).
func podCounterFor(informer cache.SharedIndexInformer) (*podCounter, error) {
	return newPodCounter(informer, listersv1.NewPodLister(informer.GetIndexer()))
}
