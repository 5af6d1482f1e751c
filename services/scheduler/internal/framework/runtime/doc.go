// Package runtime builds a profile's plugins from a Registry and runs them
// at each extension point, in the profile's order, as kube-scheduler's
// framework/runtime does: Filter and Score run in parallel over nodes,
// NormalizeScore and weights are applied per plugin, Permit may hold a pod
// (waiting pods), and Bind tries binders until one does not Skip. The
// Framework is also the Handle plugins get: the cycle's snapshot, the
// apiserver connection, the event recorder, the nominator.
package runtime
