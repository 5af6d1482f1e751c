// Package events records the kubelet's Events (Pulling, Pulled, Created,
// Started, Killing, BackOff, Unhealthy, ...) about pods and their
// containers, with source component "kubelet" and host the node's name.
// Recorder is the interface the rest of the kubelet writes to; APIRecorder
// writes core/v1 Events through the apiserver from a buffered queue,
// folding repeats into one Event with a rising count as Kubernetes does;
// Fake keeps them in memory for tests. (It stands in until
// pkg/client/record exists; only this package changes then.)
package events
