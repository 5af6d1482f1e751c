package kuberuntime

import (
	"bytes"
	"os"
	"path/filepath"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/poddns"
)

// EtcHostsPath is a pod's /etc/hosts on the node.
func EtcHostsPath(root, uid string) string { return filepath.Join(root, "pods", uid, "etc-hosts") }

// writeEtcHosts writes the pod's managed /etc/hosts (poddns.HostsFile),
// unless it holds that already.
func (m *Manager) writeEtcHosts(pod *corev1.Pod, ips []string) error {
	path := EtcHostsPath(m.rootDir, pod.GetMetadata().GetUid())
	content := poddns.HostsFile(pod, m.dns.Domain, ips)
	if cur, err := os.ReadFile(path); err == nil && bytes.Equal(cur, content) {
		return nil
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	tmp := path + ".tmp"
	if err := os.WriteFile(tmp, content, 0o644); err != nil {
		return err
	}
	return os.Rename(tmp, path)
}
