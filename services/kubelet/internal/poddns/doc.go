// Package poddns computes what a pod's sandbox is given for names: its
// resolver configuration (nameservers, search domains, options) by
// dnsPolicy and spec.dnsConfig, its hostname and domain, and the
// kubelet-managed /etc/hosts. It is pure: the node's resolv.conf comes in
// as bytes, the cluster's DNS servers and domain as a Cluster, and
// nothing here reads files or the clock. kuberuntime puts the results in
// the CRI PodSandboxConfig and writes the hosts file.
package poddns
