// Package rootcacert is Kubernetes' root-ca-cert-publisher: every Active
// namespace has the ConfigMap kube-root-ca.crt whose key ca.crt is the
// cluster CA (--root-ca-file), which the ServiceAccount admission's token
// volume projects into every pod so it can verify the apiserver. The
// controller creates the ConfigMap, puts back its data when someone edits
// it, and recreates it when it is deleted; a namespace being deleted is
// left alone.
package rootcacert
