// Package record writes core/v1 Events about objects, as client-go's
// tools/record does, for the scheduler, the controllers and the kubelet.
//
//	rec := record.NewRecorder(conn, "default-scheduler", hostname)
//	defer rec.Shutdown()
//	rec.Eventf(pod, record.EventTypeNormal, "Scheduled", "Successfully assigned %s/%s to %s", ns, name, node)
//
// Eventf never blocks: it builds the Event (involvedObject, source,
// reportingComponent/Instance, firstTimestamp = lastTimestamp = now,
// count 1, name "<involvedObject.name>.<16 hex digits of the time in ns>")
// and puts it on a bounded queue; when the queue is full the event is
// dropped with a log line. A few writer goroutines (4 by default) write the
// queue to the apiserver; identical events always share one writer.
// An event identical to one already written (same involvedObject, type,
// reason, message and source) is not a new object: the earlier Event's count
// is bumped and its lastTimestamp moved, as Kubernetes' event correlator
// does. Events of cluster-scoped objects (Nodes) go to the "default"
// namespace. The Event carries the involved object's traceparent annotation,
// so it sits in the same trace.
//
// EventRecorder is the narrow interface callers should hold; FakeRecorder
// implements it for unit tests.
package record
