//go:build tools

// Package tools pins the Kubernetes command packages that cluster/build.sh
// compiles, so that `go mod tidy` keeps their dependencies in go.mod/go.sum.
// The build tag keeps this file out of every real build.
package tools

import (
	_ "k8s.io/kubernetes/cmd/kube-apiserver"
	_ "k8s.io/kubernetes/cmd/kubectl"
	_ "k8s.io/kubernetes/cmd/kube-controller-manager"
	_ "k8s.io/kubernetes/cmd/kube-scheduler"
)
