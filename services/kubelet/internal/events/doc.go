// Package events is how the kubelet records its Events (Pulling, Pulled,
// Created, Started, Killing, BackOff, Unhealthy, ...) about pods and
// their containers: Recorder is the narrow interface the rest of the
// kubelet writes to; FromRecord writes them through pkg/client/record
// (source component "kubelet", host the node's name, repeats folded into
// one Event with a rising count, each Event in its pod's trace); Fake
// keeps them in memory for tests.
package events
