package pki

import (
	"bytes"
	"encoding/base64"
	"path/filepath"
	"strconv"
	"strings"
	"testing"
)

func TestKubeconfigsEmbedTheirComponentsCertificate(t *testing.T) {
	c := newCluster(t)
	tests := []struct {
		file   string
		server string
		cert   string
		user   string
	}{
		{"kubeconfig", "https://127.0.0.1:6443", "admin", "kubernetes-admin"},
		{"kubeconfigs/admin.conf", "https://apiserver:6443", "admin", "kubernetes-admin"},
		{"kubeconfigs/controller-manager.conf", "https://apiserver:6443", "controller-manager", "system:kube-controller-manager"},
		{"kubeconfigs/scheduler.conf", "https://apiserver:6443", "scheduler", "system:kube-scheduler"},
		{"kubeconfigs/kubelet-worker-2.conf", "https://apiserver:6443", "kubelet-worker-2", "system:node:worker-2"},
	}
	for _, tt := range tests {
		t.Run(tt.file, func(t *testing.T) {
			kc := c.read(filepath.Join(c.root, tt.file))
			want := map[string]string{
				"server":          tt.server,
				"name":            ClusterName,
				"user":            tt.user,
				"cluster":         ClusterName,
				"current-context": tt.user + "@" + ClusterName,
			}
			for key, value := range want {
				if got := yamlField(kc, key); got != value {
					t.Errorf("%s = %q, want %q", key, got, value)
				}
			}
			embedded := map[string]string{
				"certificate-authority-data": "ca.crt",
				"client-certificate-data":    tt.cert + ".crt",
				"client-key-data":            tt.cert + ".key",
			}
			for key, file := range embedded {
				data, err := base64.StdEncoding.DecodeString(yamlField(kc, key))
				if err != nil {
					t.Fatalf("%s: %v", key, err)
				}
				if !bytes.Equal(data, c.read(c.pkiPath(file))) {
					t.Errorf("%s is not %s", key, file)
				}
			}
		})
	}
}

// yamlField returns the value of the first "key: value" line, unquoted.
func yamlField(doc []byte, key string) string {
	for _, line := range strings.Split(string(doc), "\n") {
		line = strings.TrimLeft(strings.TrimSpace(line), "- ")
		value, ok := strings.CutPrefix(line, key+": ")
		if !ok {
			continue
		}
		if unquoted, err := strconv.Unquote(value); err == nil {
			return unquoted
		}
		return value
	}
	return ""
}
