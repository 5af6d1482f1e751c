// Package secureserving is a component's secure port as Kubernetes'
// components serve theirs (kube-scheduler's 10259, the kubelet's 10250):
// HTTPS with a serving certificate, every request authenticated and then
// authorized by the apiserver, which the component delegates both to.
//
// An Authenticator names a request's User: the subject of a client
// certificate the client CA verifies (CN the user, O its groups), else the
// user of an "Authorization: Bearer" token the apiserver vouches for
// (TokenReviews: POST /apis/authentication.k8s.io/v1/tokenreviews), else
// system:anonymous where allowed, else the request gets 401. An
// Authorizer then decides on the request's Attributes — for a metrics
// port, the verb (the lowercased method) on a non-resource path —
// SubjectAccessReviews asking the apiserver
// (POST /apis/authorization.k8s.io/v1/subjectaccessreviews), the apiserver
// answering with its own RBAC and Node authorizers; a refusal is
// Kubernetes' 403 (`forbidden: User "jane" cannot get path "/metrics"`).
// CachedAuthorizer and CachedTokenAuthenticator keep the apiserver's
// answers for a while (10 s each by default, kube's delegated defaults), so
// a scraper every few seconds costs the apiserver a review per TTL, not
// one per request. The health paths (/healthz, /livez, /readyz) skip
// both, as Kubernetes' --authorization-always-allow-paths.
//
// Config holds the pieces and wraps a handler (Config.Handler); Options
// are the Kubernetes flags that build one (--secure-port, --bind-address,
// --tls-cert-file, --client-ca-file, --authentication-kubeconfig,
// --authorization-kubeconfig, the cache TTLs); Serve serves a handler on
// a listener until its context ends.
package secureserving
