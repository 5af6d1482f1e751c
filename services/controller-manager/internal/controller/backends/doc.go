// Package backends decides which Pods back a Service, and how, for the two
// controllers that publish a Service's endpoints: the endpointslice
// controller (discovery.k8s.io/v1 EndpointSlices) and the endpoints
// controller (core/v1 Endpoints). Both ask it which Services get endpoints
// at all (Managed), which Services a Pod's change concerns (ServicesOf),
// which selected Pods are endpoints (Include), each Pod's ready, serving
// and terminating state (StateOf), its hostname for the Service
// (Hostname) and the port each Service port resolves to in it (Ports), so
// that a Service's EndpointSlices and its Endpoints always agree. Every
// function but ServicesOf is pure.
package backends
