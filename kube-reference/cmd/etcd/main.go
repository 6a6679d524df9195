// Command etcd is etcd's own server (go.etcd.io/etcd/server/v3/etcdmain) at the version
// k8s.io/kubernetes v1.37.2 requires, so that kube's integration tests (scheduler_perf among
// them) find an etcd they accept on PATH without any download.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
