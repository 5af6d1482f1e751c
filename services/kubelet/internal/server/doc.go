// Package server is the kubelet's own HTTP(S) endpoint, the one the
// apiserver proxies `kubectl logs`, `kubectl exec` and `kubectl
// port-forward` to:
//
//	GET /containerLogs/{namespace}/{pod}/{container}?follow&tailLines&previous&limitBytes
//	GET|POST /exec/{namespace}/{pod}/{container}?command=...&stdin&stdout&stderr&tty
//	GET|POST /portForward/{namespace}/{pod}[/{uid}]
//	GET /healthz
//
// Exec speaks Kubernetes' WebSocket stream protocols (v5.channel.k8s.io
// and v4.channel.k8s.io: one byte of stream ID before each message,
// stdin 0, stdout 1, stderr 2, the exit status as a Status on 3, terminal
// resizes on 4); a request without an upgrade runs the command without
// stdin and answers its output, with the exit code in X-Exit-Code.
//
// Port forwarding speaks Kubernetes' SPDY protocol (portforward.k8s.io,
// served by k8s.io/cri-streaming's portforward package): each forwarded
// connection is a pair of streams sharing a requestID header, the data
// stream and the error stream, whose port header names the pod's port; the
// pair goes to the runtime's PortForward on the pod's newest ready sandbox,
// which dials 127.0.0.1:port in the pod's network namespace. A failed dial
// is written on that pair's error stream; the connection stays up for the
// next pair. kubectl's WebSocket tunnel (SPDY/3.1+portforward.k8s.io) ends
// at the apiserver, which speaks SPDY to the kubelet, as kube-apiserver
// does; the older WebSocket channel protocol (v4.channel.k8s.io, ports in
// the query) is served too.
//
// The server speaks only TLS, with the node's serving certificate. Every
// request is authenticated, as Kubernetes' kubelet does, by
// pkg/secureserving's Authenticator: a client certificate signed by the
// cluster CA (CN the user, O the groups), else a bearer token the
// apiserver vouches for (TokenReviews, the webhook token authentication,
// answers kept 2 min here), else system:anonymous where allowed, else 401.
// It is then authorized as a verb on nodes/<node>/proxy (get for logs,
// create for exec and port forwarding) by a secureserving.Authorizer: AlwaysAllow, or
// SubjectAccessReviews, the Webhook mode that asks the apiserver, its
// decisions kept (allowed 5 min, denied 30 s). A
// refusal is a 403 reading "Forbidden (user=..., verb=..., resource=nodes,
// subresource(s)=[proxy])". /healthz alone may also be served in plain HTTP
// on its own address (Config.HealthzAddr).
package server
