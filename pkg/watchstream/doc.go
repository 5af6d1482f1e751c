// Package watchstream is the contract between the apiserver's NATS
// publisher and the watchcache replicas: the JetStream stream, the subject
// of each resource and namespace, and the protobuf message that carries one
// watch event or mark.
//
// The apiserver publishes, for each resource, every event its single etcd
// watch applies to its watch cache, in revision order, each with the next
// number of a per-resource sequence that starts at 1 in each publisher
// epoch (one apiserver process). A replica that sees a number other than
// the one it expects, or a new epoch, knows it missed something. Progress
// marks carry the etcd revision the resource is current to when nothing
// changed; a Reset mark says the publisher relisted (its own etcd watch
// broke), so events before its revision may be missing from the stream.
// The W3C traceparent of the object travels in a message header so that
// the replica's fan-out span joins the object's trace.
package watchstream
