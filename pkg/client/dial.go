package client

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/base64"
	"errors"
	"flag"
	"fmt"
	"os"
	"strings"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials"
	"google.golang.org/grpc/credentials/insecure"
)

// Credentials say how a component proves who it is to the apiserver and
// how it checks the apiserver: either a kubeconfig with embedded data (as
// `make certs` writes them), or PEM files. All empty means plain text,
// for an apiserver started without TLS.
type Credentials struct {
	Kubeconfig string
	CAFile     string
	CertFile   string
	KeyFile    string
	// Token is sent as "authorization: Bearer <token>" on every call.
	Token string
}

// ErrNoKubeconfigData means a kubeconfig lacks an embedded CA, client
// certificate or key.
var ErrNoKubeconfigData = errors.New("client: kubeconfig has no embedded certificate-authority-data, client-certificate-data or client-key-data")

// DialOptions returns the transport options for c (and the bearer token).
func (c Credentials) DialOptions() ([]grpc.DialOption, error) {
	tc, err := c.TransportCredentials()
	if err != nil {
		return nil, err
	}
	opts := []grpc.DialOption{grpc.WithTransportCredentials(tc)}
	if c.Token != "" {
		opts = append(opts, grpc.WithPerRPCCredentials(bearer(c.Token)))
	}
	return opts, nil
}

// TransportCredentials are TLS with c's CA and certificate, or plain
// text when c is empty.
func (c Credentials) TransportCredentials() (credentials.TransportCredentials, error) {
	if c == (Credentials{}) {
		return insecure.NewCredentials(), nil
	}
	cfg, err := c.TLSConfig()
	if err != nil {
		return nil, err
	}
	return credentials.NewTLS(cfg), nil
}

// TLSConfig returns the client TLS configuration of c.
func (c Credentials) TLSConfig() (*tls.Config, error) {
	caPEM, certPEM, keyPEM, err := c.pems()
	if err != nil {
		return nil, err
	}
	cfg := &tls.Config{MinVersion: tls.VersionTLS12}
	if caPEM != nil {
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(caPEM) {
			return nil, fmt.Errorf("client: no CA certificate in %s", c.source())
		}
		cfg.RootCAs = pool
	}
	if certPEM != nil {
		pair, err := tls.X509KeyPair(certPEM, keyPEM)
		if err != nil {
			return nil, fmt.Errorf("client: %s: %w", c.source(), err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg, nil
}

func (c Credentials) source() string {
	if c.Kubeconfig != "" {
		return c.Kubeconfig
	}
	return c.CAFile
}

func (c Credentials) pems() (ca, cert, key []byte, err error) {
	if c.Kubeconfig != "" {
		data, err := os.ReadFile(c.Kubeconfig)
		if err != nil {
			return nil, nil, nil, err
		}
		return kubeconfigData(string(data))
	}
	read := func(path string) ([]byte, error) {
		if path == "" {
			return nil, nil
		}
		return os.ReadFile(path)
	}
	if ca, err = read(c.CAFile); err != nil {
		return nil, nil, nil, err
	}
	if cert, err = read(c.CertFile); err != nil {
		return nil, nil, nil, err
	}
	if key, err = read(c.KeyFile); err != nil {
		return nil, nil, nil, err
	}
	return ca, cert, key, nil
}

// kubeconfigData reads the first embedded CA, client certificate and key
// of a kubeconfig. It reads the "key: base64" lines and nothing else, which
// is all a kubeconfig with one cluster and one user needs.
func kubeconfigData(doc string) (ca, cert, key []byte, err error) {
	fields := map[string][]byte{}
	for _, line := range strings.Split(doc, "\n") {
		k, v, ok := strings.Cut(strings.TrimSpace(line), ":")
		if !ok {
			continue
		}
		switch k {
		case "certificate-authority-data", "client-certificate-data", "client-key-data":
			if _, seen := fields[k]; seen {
				continue
			}
			b, err := base64.StdEncoding.DecodeString(strings.Trim(strings.TrimSpace(v), `"'`))
			if err != nil {
				return nil, nil, nil, fmt.Errorf("client: kubeconfig %s: %w", k, err)
			}
			fields[k] = b
		}
	}
	ca, cert, key = fields["certificate-authority-data"], fields["client-certificate-data"], fields["client-key-data"]
	if ca == nil || cert == nil || key == nil {
		return nil, nil, nil, ErrNoKubeconfigData
	}
	return ca, cert, key, nil
}

// bearer sends a token with every call; it requires a secure transport.
type bearer string

func (b bearer) GetRequestMetadata(_ context.Context, _ ...string) (map[string]string, error) {
	return map[string]string{"authorization": "Bearer " + string(b)}, nil
}

func (bearer) RequireTransportSecurity() bool { return true }

// BindFlags registers --kubeconfig, --ca-file, --cert-file, --key-file and
// --token on fs, filling c.
func (c *Credentials) BindFlags(fs *flag.FlagSet) {
	fs.StringVar(&c.Kubeconfig, "kubeconfig", "", "kubeconfig with the embedded CA, client certificate and key to reach the apiserver with (TLS)")
	fs.StringVar(&c.CAFile, "ca-file", "", "CA bundle that signed the apiserver's serving certificate (without --kubeconfig)")
	fs.StringVar(&c.CertFile, "cert-file", "", "client certificate (without --kubeconfig)")
	fs.StringVar(&c.KeyFile, "key-file", "", "client key (without --kubeconfig)")
	fs.StringVar(&c.Token, "token", "", "bearer token sent on every call (TLS only)")
}
