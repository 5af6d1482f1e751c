// Package pki creates podline's cluster identity: two certificate
// authorities, the serving and client certificates every component presents,
// the ServiceAccount signing key pair and the kubeconfigs that carry the
// client certificates.
//
// The pieces fit in three layers. plan.go is a pure function from Options to
// the list of certificates the cluster needs (who signs each one, its
// subject, its SANs and its usages), named after kubeadm's layout. issue.go
// turns one such spec into a signed certificate, with no I/O. store.go and
// generate.go walk the plan against a directory: a file that is already
// there and still valid is kept, anything missing is created, so running
// Generate twice changes nothing. Every key is ECDSA P-256 and only the
// standard library's crypto is used.
//
// The etcd members' files are also laid out per member under
// etcd/<member>/{ca,server,peer}.{crt,key}, so one directory mounted at
// /etc/kubernetes/pki/etcd gives a member kubeadm's paths. Each node's
// kubelet serving certificate sits the same way in kubelets/<node>/
// {kubelet.crt,kubelet.key,ca.crt}, one directory to mount into the node.
package pki
