package main

import (
	"crypto/tls"
	"flag"
	"fmt"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"

	"podline.dev/pkg/pki"
	"podline.dev/services/watchcache/internal/replica"
)

// servingFlags say how the replica serves: TLS with its certificate, and
// with a client CA, only to the components named.
type servingFlags struct {
	cert, key, clientCA string
	users, groups       string
}

func (f *servingFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.cert, "tls-cert-file", "", "serving certificate for gRPC (plain text when empty)")
	fs.StringVar(&f.key, "tls-private-key-file", "", "serving key")
	fs.StringVar(&f.clientCA, "client-ca-file", "", "CA bundle that verifies client certificates (CN the user, O the groups); with it every client must present one")
	fs.StringVar(&f.users, "authorized-users", "system:kube-controller-manager,system:kube-scheduler", "users served (with --client-ca-file): the replica does not evaluate RBAC, so only components that may read everything")
	fs.StringVar(&f.groups, "authorized-groups", "system:masters,system:nodes", "groups served (with --client-ca-file)")
}

// options returns the gRPC server options and who is served.
func (f servingFlags) options() ([]grpc.ServerOption, replica.Access, error) {
	if f.cert == "" {
		if f.clientCA != "" {
			return nil, replica.Access{}, fmt.Errorf("--client-ca-file needs --tls-cert-file")
		}
		return nil, replica.Access{}, nil
	}
	pair, err := tls.LoadX509KeyPair(f.cert, f.key)
	if err != nil {
		return nil, replica.Access{}, err
	}
	cfg := &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}
	var access replica.Access
	if f.clientCA != "" {
		if cfg.ClientCAs, err = pki.LoadCertPool(f.clientCA); err != nil {
			return nil, replica.Access{}, err
		}
		cfg.ClientAuth = tls.RequireAndVerifyClientCert
		access = replica.Access{Users: list(f.users), Groups: list(f.groups)}
	}
	return []grpc.ServerOption{grpc.Creds(credentials.NewTLS(cfg))}, access, nil
}

func list(s string) []string {
	var out []string
	for _, v := range strings.Split(s, ",") {
		if v = strings.TrimSpace(v); v != "" {
			out = append(out, v)
		}
	}
	return out
}
