// Package endpointslice is the EndpointSlice controller: for each Service
// with a selector it keeps EndpointSlices (generateName <service>-, label
// kubernetes.io/service-name, managed-by endpointslice-controller.k8s.io,
// owned by the Service) listing the IPs of the Pods the selector matches,
// with each endpoint's ready, serving and terminating conditions and the
// ports the Service's targetPorts resolve to in that Pod. As in
// Kubernetes, ready Pods are ready endpoints, Pods that are not ready are
// listed as not ready (unless publishNotReadyAddresses), Pods without an
// IP or finished are left out, endpoints with the same ports share slices
// of at most 100, and a Service with no endpoints keeps one empty
// placeholder slice. Which Pods back a Service, and on which ports, is
// package backends, shared with the endpoints controller. desired.go
// computes the slices a Service should have (pure); controller.go
// reconciles them with the ones that exist.
package endpointslice
