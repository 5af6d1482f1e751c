// Package server assembles the apiserver: one registry and watch cache per
// resource over the etcd store, the gRPC services, the REST gateway over an
// in-process gRPC connection, the compactor, and the listeners: REST (and,
// for convenience, gRPC over net/http) on the secure port as kube-apiserver
// serves its API, and gRPC on grpc-go's own transport on the gRPC port,
// which podline's components use: it is several times faster for many
// concurrent watch streams.
//
// With Config.Auth set, every request passes the chain before it reaches a
// registry. REST requests are authenticated in an HTTP filter (client
// certificate, bearer token; 401 otherwise, except the public health
// paths), which also applies impersonation and authorizes non-resource
// paths; the user then travels to the in-process gRPC server in metadata
// sealed with a per-process secret, which only that server trusts. Native
// gRPC calls are authenticated from the TLS peer certificate or bearer
// token by an interceptor. Resource requests of both transports are
// authorized in one place, the gRPC interceptors, which map the method and
// request to Kubernetes' attributes (internal/authz) and write the audit
// log (internal/audit, with Config.Audit). TokenRequest (tokens bound to
// a Pod and its Node when asked), TokenReview, SubjectAccessReview and the
// self-review APIs (kubectl create token, auth whoami, auth can-i) are HTTP
// handlers behind the same filter.
//
// pods/log, pods/exec and pods/portforward are relayed to the kubelet of
// the Pod's node (podproxy.go) as the apiserver's kubelet client, after
// authorization of that subresource. Upgraded connections pass through as
// bytes, with one translation (portforward.go): kubectl tunnels
// port-forward's SPDY inside a WebSocket (subprotocol
// SPDY/3.1+portforward.k8s.io, binary messages carrying SPDY frames), and
// the apiserver upgrades to plain SPDY at the kubelet and relays message
// payloads to the kubelet's connection and back. Translating here keeps
// the kubelet Kubernetes' (it speaks SPDY, served by cri-streaming's
// portforward package) and costs a byte relay without parsing SPDY,
// where making the kubelet accept the tunnel too would need a SPDY server
// over a WebSocket-backed connection of its own.
package server
