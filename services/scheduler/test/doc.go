// Package test runs the scheduler against a real apiserver on an embedded
// etcd (apiservertest), with Node objects and no kubelet: spreading,
// FailedScheduling messages, preemption, requeueing on cluster events,
// events, status, tracing and leader election.
package test
