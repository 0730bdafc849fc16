// Command etcd is a minimal entry point for the etcd server, built from the
// go.etcd.io/etcd/server/v3 module so the integration control plane needs no
// downloaded release tarball: the same Go module proxy that serves Kubernetes
// also serves etcd.
package main

import (
	"os"

	"go.etcd.io/etcd/server/v3/etcdmain"
)

func main() {
	etcdmain.Main(os.Args)
}
