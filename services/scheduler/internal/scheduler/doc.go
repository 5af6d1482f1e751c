// Package scheduler is the scheduler's control loop, as kube-scheduler's
// pkg/scheduler: informers on Pods and Nodes feed the node cache and the
// scheduling queue (eventhandlers.go); ScheduleOne pops one pod, runs the
// scheduling cycle serially on a fresh snapshot of the cache (PreFilter,
// Filter over a share of the nodes, PostFilter when none fits, PreScore,
// Score, pick the best, assume it onto the node, Reserve, Permit) and hands
// the pod to a binding cycle in its own goroutine (WaitOnPermit, PreBind,
// Bind, PostBind). A pod that fits nowhere gets a FailedScheduling event and
// a PodScheduled=False condition with Kubernetes' message, and goes back to
// the queue; a bound pod gets a Scheduled event.
//
// Every attempt is a span, a child of the traceparent on the Pod, with a
// child span per extension point; the Filter and Score spans carry each
// plugin's verdict and score for the nodes that matter, so a trace shows
// why a node won. The Binding, status updates and events carry the trace.
package scheduler
