package kuberuntime

import (
	"bytes"
	"fmt"
	"os"
	"path/filepath"

	corev1 "podline.dev/proto/core/v1"
)

// EtcHostsPath is a pod's /etc/hosts on the node.
func EtcHostsPath(root, uid string) string { return filepath.Join(root, "pods", uid, "etc-hosts") }

// Hostname is the pod's hostname: spec.hostname or its name (63 chars at most).
func Hostname(pod *corev1.Pod) string {
	h := pod.GetSpec().GetHostname()
	if h == "" {
		h = pod.GetMetadata().GetName()
	}
	if len(h) > 63 {
		h = h[:63]
	}
	return h
}

// writeEtcHosts writes the pod's /etc/hosts: localhost, the pod's own
// address under its hostname, and its hostAliases.
func writeEtcHosts(path string, pod *corev1.Pod, ips []string) error {
	var b bytes.Buffer
	b.WriteString("# Kubernetes-managed hosts file.\n127.0.0.1\tlocalhost\n::1\tlocalhost ip6-localhost ip6-loopback\n")
	b.WriteString("fe00::0\tip6-localnet\nfe00::0\tip6-mcastprefix\nfe00::1\tip6-allnodes\nfe00::2\tip6-allrouters\n")
	name := Hostname(pod)
	if sub := pod.GetSpec().GetSubdomain(); sub != "" {
		name = fmt.Sprintf("%s.%s.%s.svc.cluster.local\t%s", name, sub, pod.GetMetadata().GetNamespace(), name)
	}
	for _, ip := range ips {
		fmt.Fprintf(&b, "%s\t%s\n", ip, name)
	}
	for _, a := range pod.GetSpec().GetHostAliases() {
		fmt.Fprintf(&b, "\n# Entries added by HostAliases.\n%s", a.GetIp())
		for _, h := range a.GetHostnames() {
			fmt.Fprintf(&b, "\t%s", h)
		}
		b.WriteByte('\n')
	}
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, b.Bytes()) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, b.Bytes(), 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
