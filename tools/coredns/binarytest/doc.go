// Package binarytest checks the bin/coredns that mk/coredns.mk builds by
// running it: a Corefile with the hosts plugin on a loopback port answers A
// records to a DNS client, health and ready answer on their ports, a name
// outside the served zones is REFUSED, and the Corefile of coredns.yaml
// loads with every plugin it names compiled in. The kubernetes plugin
// against a podline apiserver is checked from the workspace
// (services/apiserver/test), where the test apiserver lives.
//
// The binary is $COREDNS or the repository's bin/coredns; without either
// the tests skip (make test-coredns builds it first).
package binarytest
