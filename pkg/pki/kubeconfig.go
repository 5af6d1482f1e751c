package pki

import (
	"bytes"
	"encoding/base64"
	"fmt"
)

// ClusterName is the cluster's name inside every kubeconfig.
const ClusterName = "podline"

// kubeconfig is what one kubeconfig file says: one cluster, one user with
// an embedded client certificate, and the context joining them.
type kubeconfig struct {
	Server string
	User   string
	CA     []byte // PEM of the cluster CA
	Cert   []byte // PEM of the client certificate
	Key    []byte // PEM of the client key
}

// renderKubeconfig returns k in the kubeconfig YAML that kubectl and
// client-go read. Strings are written double-quoted, which YAML reads the
// same way Go's %q writes them for the ASCII names used here.
func renderKubeconfig(k kubeconfig) []byte {
	b64 := base64.StdEncoding.EncodeToString
	context := k.User + "@" + ClusterName
	var b bytes.Buffer
	fmt.Fprintf(&b, "apiVersion: v1\nkind: Config\n")
	fmt.Fprintf(&b, "clusters:\n- name: %q\n  cluster:\n", ClusterName)
	fmt.Fprintf(&b, "    server: %q\n", k.Server)
	fmt.Fprintf(&b, "    certificate-authority-data: %s\n", b64(k.CA))
	fmt.Fprintf(&b, "users:\n- name: %q\n  user:\n", k.User)
	fmt.Fprintf(&b, "    client-certificate-data: %s\n", b64(k.Cert))
	fmt.Fprintf(&b, "    client-key-data: %s\n", b64(k.Key))
	fmt.Fprintf(&b, "contexts:\n- name: %q\n  context:\n", context)
	fmt.Fprintf(&b, "    cluster: %q\n    user: %q\n", ClusterName, k.User)
	fmt.Fprintf(&b, "current-context: %q\n", context)
	return b.Bytes()
}
