// Package test holds the controller-manager's integration tests: a real
// apiserver on an embedded etcd (apiservertest) and the controller-manager
// in-process, with short timers. There is no kubelet: where availability
// matters, a test marks pods Running and Ready through UpdateStatus itself.
package test
