// Package kubesvc keeps the `kubernetes` Service in the default namespace,
// as kube-apiserver's bootstrap controller and lease endpoint reconciler do:
// the Service (ClusterIP the first IP of the Service range, port https 443
// to the apiserver's secure port), and its Endpoints and EndpointSlice,
// both named kubernetes, listing every live apiserver's advertise address.
//
// Each apiserver renews a lease for its address in etcd
// (/registry/masterleases/<ip>, an etcd lease of LeaseTTL) and writes the
// addresses whose leases live, so several apiservers each add their own and
// one that stops drops out within LeaseTTL. Reconcile runs every Interval,
// and at once when a watch sees one of the three objects change, so a
// deleted `kubernetes` Service is back within a moment. The EndpointSlice
// carries only the kubernetes.io/service-name label (no managed-by), as
// kube-apiserver writes it; the Service has no selector, so the
// controller-manager's endpoint controllers leave both alone.
package kubesvc
