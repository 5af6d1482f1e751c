// Package token is the kubelet's ServiceAccount token manager, as
// Kubernetes' kubelet keeps the tokens of its Pods' projected volumes: a
// Manager asks a Requester (the apiserver's TokenRequest API,
// POST .../serviceaccounts/<name>/token, with the kubelet's credentials)
// for a token bound to the Pod, keeps it, and asks again once 80% of its
// life has passed (or it is a day old). When the apiserver cannot be
// reached, a token that has not expired is served on. A Pod's tokens are
// forgotten when its volumes are torn down. The Manager reads time from an
// injected clock; API is the Requester over HTTPS.
package token
