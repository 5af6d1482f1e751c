// Package serve answers the apiserver's gRPC services for reading, List and
// Watch of every resource, from a watchcache replica's caches. The service
// descriptors are the generated ones (found by name in the proto registry,
// as the apiserver's own gRPC layer does), so a client cannot tell a
// replica from the apiserver for these two methods. Writes and Get answer
// 405 MethodNotSupported: clients write to the apiserver.
//
// Watch from any resourceVersion is served by the cache: in order, exactly
// once, 410 Expired before its window, a wait (then 504) past its
// revision. List at resourceVersion "0" or a given one (not older than) is
// served by the cache after it has caught up; a list with no
// resourceVersion reads the apiserver's current revision (one cheap
// limit=1 list) and waits for the cache to reach it, as kube-apiserver's
// consistent reads from cache do; exact and paged lists are forwarded to
// the apiserver. Every List and Watch passes the replica's Gate first: a
// replica that is not serving (NATS gone, a cache not yet current)
// answers 503, and when it stops serving, every open watch ends with 503;
// clients then watch the apiserver, from the last resourceVersion they
// saw. The Gate then authorizes the request (403 with Kubernetes' text).
package serve
