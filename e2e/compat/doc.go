// Package compat checks that podline's REST API is Kubernetes' API as the
// real client-go sees it. Its tests start the apiserver in-process
// (apiservertest) and drive it with client-go's typed clientset, watches and
// shared informers, exactly as a controller written for Kubernetes would.
//
// The module stands outside the go.work workspace, so that client-go and
// k8s.io/api, k8s.io/apimachinery do not move the workspace's dependency
// versions; run it with GOWORK=off (make test-compat).
package compat
