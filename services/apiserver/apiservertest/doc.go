// Package apiservertest runs a real apiserver for tests: an embedded etcd
// member in a temporary directory on loopback ports, the apiserver on top of
// it, both in-process, with short timers. Tests of any podline module use it
// to talk gRPC or REST to the same server the cluster runs. Every
// namespace gets its "default" ServiceAccount, as the controller-manager
// would make it (WithoutDefaultServiceAccounts for tests that run it).
package apiservertest
