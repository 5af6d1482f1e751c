// Package test runs watchcache replicas in-process against a real
// nats-server (the binary bin/nats-server, built by `make tools`) and an
// apiserver on embedded etcd, and checks them against direct apiserver
// watches: event for event, across a replica restart, across a sequence
// gap, and at the edges of the window (410, waiting for newer revisions).
package test
