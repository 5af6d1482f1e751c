// Package queue is the scheduling queue, as kube-scheduler's
// PriorityQueue: three places a pending pod can be.
//
//   - activeQ, a heap in the profile's QueueSort order (PrioritySort:
//     priority, then creation time), which Pop blocks on;
//   - backoffQ, pods that failed and wait out a per-pod exponential backoff
//     (1 s doubling to 10 s by default) before they return to activeQ;
//   - the unschedulable pool, pods that fit no node. They leave it when a
//     cluster event that one of the plugins that rejected them registered
//     (a Node added or changed, an assigned Pod deleted, a taint removed...)
//     happens and the plugin's QueueingHint says it may help, or after
//     5 minutes (the periodic flush), whichever comes first.
//
// A pod that failed while an event arrived during its scheduling cycle
// goes to backoffQ rather than the pool, so the event is not lost. The
// queue is also the PodNominator: it remembers which pods preemption
// nominated to which node. Time comes from an injected clock.
package queue
