// Package authn authenticates requests, as kube-apiserver's authenticators
// do: a chain of authenticators (x509 client certificates, static bearer
// tokens, ServiceAccount JWTs) is tried in order on the credentials a
// request presents; the first that recognises them names the user. A
// request with no credentials any authenticator accepts is refused with
// 401 Unauthorized, except where the caller allows anonymous access
// (health endpoints). The REST filter and the gRPC interceptors in
// internal/server feed it credentials; the user it returns travels in
// internal/request to authorization, admission and audit.
package authn
