package main

import (
	"flag"
	"fmt"
	"os"
	"strings"

	"podline.dev/pkg/pki"
)

func main() {
	var (
		dir       = flag.String("dir", pki.DefaultDir, "directory for CAs, certificates and keys")
		admin     = flag.String("kubeconfig", pki.DefaultAdminKubeconfig, "admin kubeconfig for use from the host")
		kcDir     = flag.String("kubeconfig-dir", pki.DefaultKubeconfigDir, "directory for per-component kubeconfigs used inside compose")
		external  = flag.String("server", pki.DefaultExternalServer, "apiserver URL in the admin kubeconfig")
		internal  = flag.String("internal-server", pki.DefaultInternalServer, "apiserver URL in the component kubeconfigs")
		nodes     = flag.String("nodes", strings.Join(pki.DefaultNodes(), ","), "comma-separated node names that get kubelet credentials")
		members   = flag.String("etcd-members", strings.Join(pki.DefaultEtcdMembers(), ","), "comma-separated etcd member names")
		quiet     = flag.Bool("q", false, "print only files that were created or replaced")
		certValid = flag.Duration("cert-validity", pki.DefaultCertValidity, "lifetime of new leaf certificates")
	)
	flag.Parse()
	report, err := pki.Generate(
		pki.WithDir(*dir),
		pki.WithAdminKubeconfig(*admin),
		pki.WithKubeconfigDir(*kcDir),
		pki.WithExternalServer(*external),
		pki.WithInternalServer(*internal),
		pki.WithNodes(splitList(*nodes)...),
		pki.WithEtcdMembers(splitList(*members)...),
		pki.WithValidity(pki.DefaultCAValidity, *certValid),
	)
	for _, e := range report {
		if !*quiet || e.Action != pki.Kept {
			fmt.Printf("%-8s %s\n", e.Action, e.Path)
		}
	}
	if err != nil {
		fmt.Fprintln(os.Stderr, "podline-certs:", err)
		os.Exit(1)
	}
}

// splitList splits a comma-separated flag value, dropping empty items.
func splitList(s string) []string {
	var out []string
	for _, item := range strings.Split(s, ",") {
		if item = strings.TrimSpace(item); item != "" {
			out = append(out, item)
		}
	}
	return out
}
