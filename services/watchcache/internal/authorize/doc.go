// Package authorize decides whether a watchcache replica's client may read
// what it asks, the way a server that delegates to the apiserver does in
// Kubernetes: the client is the user and groups of its x509 certificate
// (CN and O, verified against the cluster CA), and each List and Watch
// becomes the attributes the apiserver would authorize for the same
// request — verb, API group, resource, namespace and the field selector
// the Node authorizer reads (a kubelet may list and watch only the Pods
// with spec.nodeName=<its node>). Review asks the apiserver with a
// SubjectAccessReview (POST /apis/authorization.k8s.io/v1/subjectaccessreviews)
// and Cached keeps its answers for a short time, allowed and denied alike
// (10 s each, kube's delegated authorization defaults), so a relisting
// informer or a reconnecting kubelet costs the apiserver one review, not
// one per call. A denied request gets Kubernetes' 403 text.
package authorize
