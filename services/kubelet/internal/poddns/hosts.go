package poddns

import (
	"bytes"
	"fmt"
	"strings"

	corev1 "podline.dev/proto/core/v1"
)

// maxHostname is the longest hostname the kernel takes.
const maxHostname = 63

// Hostname is the pod's hostname and domain: spec.hostname or its name
// (at most 63 characters, no trailing '-' or '.'), and with a subdomain
// "<subdomain>.<namespace>.svc.<cluster domain>".
func Hostname(pod *corev1.Pod, clusterDomain string) (hostname, domain string) {
	hostname = pod.GetSpec().GetHostname()
	if hostname == "" {
		hostname = pod.GetMetadata().GetName()
	}
	if len(hostname) > maxHostname {
		hostname = strings.TrimRight(hostname[:maxHostname], "-.")
	}
	if sub := pod.GetSpec().GetSubdomain(); sub != "" && clusterDomain != "" {
		domain = fmt.Sprintf("%s.%s.svc.%s", sub, pod.GetMetadata().GetNamespace(), clusterDomain)
	}
	return hostname, domain
}

// SandboxHostname is the hostname the sandbox gets: empty in the host's
// network namespace (the node's own), the FQDN with setHostnameAsFQDN.
func SandboxHostname(pod *corev1.Pod, clusterDomain string) string {
	if pod.GetSpec().GetHostNetwork() {
		return ""
	}
	h, d := Hostname(pod, clusterDomain)
	if pod.GetSpec().GetSetHostnameAsFqdn() && d != "" {
		h += "." + d
	}
	return h
}

// HostsFile is the kubelet-managed /etc/hosts of a pod with its own
// network namespace: localhost, the pod's IPs under its hostname (and its
// FQDN with a subdomain), then its hostAliases.
func HostsFile(pod *corev1.Pod, clusterDomain string, ips []string) []byte {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file.\n")
	b.WriteString("127.0.0.1\tlocalhost\n")
	b.WriteString("::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\n")
	b.WriteString("fe00::0\tip6-mcastprefix\n")
	b.WriteString("fe00::1\tip6-allnodes\n")
	b.WriteString("fe00::2\tip6-allrouters\n")
	h, d := Hostname(pod, clusterDomain)
	for _, ip := range ips {
		if d != "" {
			fmt.Fprintf(&b, "%s\t%s.%s\t%s\n", ip, h, d, h)
		} else {
			fmt.Fprintf(&b, "%s\t%s\n", ip, h)
		}
	}
	if aliases := pod.GetSpec().GetHostAliases(); len(aliases) > 0 {
		b.WriteString("\n# Entries added by HostAliases.\n")
		for _, a := range aliases {
			fmt.Fprintf(&b, "%s\t%s\n", a.GetIp(), strings.Join(a.GetHostnames(), "\t"))
		}
	}
	return b.Bytes()
}
