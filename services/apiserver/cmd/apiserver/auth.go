package main

import (
	"flag"
	"fmt"
	"io"
	"strings"

	"podline.dev/pkg/pki"
	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/authn"
	"podline.dev/services/apiserver/internal/server"
)

// authFlags are kube-apiserver's authentication and authorization flags.
// Without any authenticator flag the apiserver authenticates no one and
// allows everything, as before the chain existed.
type authFlags struct {
	clientCA       string
	tokenFile      string
	saKeyFile      string
	saSigningKey   string
	saIssuer       string
	apiAudiences   string
	authorizations string
	auditLogPath   string
	auditPolicy    string
	auditRotation  audit.Rotation
}

func (f *authFlags) bind(fs *flag.FlagSet) {
	fs.StringVar(&f.clientCA, "client-ca-file", "", "CA bundle that verifies client certificates (CN is the user, O the groups)")
	fs.StringVar(&f.tokenFile, "token-auth-file", "", "static bearer tokens, CSV lines token,user,uid[,\"group1,group2\"] (a bootstrap token)")
	fs.StringVar(&f.saKeyFile, "service-account-key-file", "", "public key (PEM) verifying ServiceAccount tokens; the pair of --service-account-signing-key-file")
	fs.StringVar(&f.saSigningKey, "service-account-signing-key-file", "", "private key (PEM) signing the tokens of the TokenRequest API (serviceaccounts/<name>/token)")
	fs.StringVar(&f.saIssuer, "service-account-issuer", authn.DefaultIssuer, "iss of ServiceAccount tokens")
	fs.StringVar(&f.apiAudiences, "api-audiences", "", "comma-separated audiences a ServiceAccount token must carry one of (default: the issuer)")
	fs.StringVar(&f.auditLogPath, "audit-log-path", "", "append the audit log (JSON lines) to this file; \"-\" is standard output; empty disables it")
	fs.IntVar(&f.auditRotation.MaxSizeMB, "audit-log-maxsize", 0, "megabytes the audit log file grows to before it is rotated (0: never)")
	fs.IntVar(&f.auditRotation.MaxBackups, "audit-log-maxbackup", 0, "rotated audit log files kept (0: all)")
	fs.IntVar(&f.auditRotation.MaxAgeDays, "audit-log-maxage", 0, "days a rotated audit log file is kept (0: no limit)")
	fs.StringVar(&f.auditPolicy, "audit-policy-file", "", "audit.k8s.io/v1 Policy (None/Metadata/Request/RequestResponse rules); without it every request is logged at Metadata")
	fs.StringVar(&f.authorizations, "authorization-mode", server.ModeAlwaysAllow, "comma-separated authorizers in order: Node, RBAC, AlwaysAllow (system:masters is always allowed)")
}

// config returns the chain's configuration, or nil when no authenticator
// is configured.
func (f *authFlags) config() (*server.AuthConfig, error) {
	if f.clientCA == "" && f.tokenFile == "" && f.saKeyFile == "" {
		if f.authorizations != server.ModeAlwaysAllow {
			return nil, fmt.Errorf("--authorization-mode=%s needs an authenticator (--client-ca-file, --token-auth-file or --service-account-key-file)", f.authorizations)
		}
		return nil, nil
	}
	cfg := &server.AuthConfig{ServiceAccountIssuer: f.saIssuer, AuthorizationModes: split(f.authorizations)}
	var err error
	if f.clientCA != "" {
		if cfg.ClientCA, err = pki.LoadCertPool(f.clientCA); err != nil {
			return nil, err
		}
	}
	if f.tokenFile != "" {
		if cfg.Tokens, err = authn.LoadTokenFile(f.tokenFile); err != nil {
			return nil, err
		}
	}
	if f.saKeyFile != "" {
		if cfg.ServiceAccountKey, err = pki.LoadPublicKey(f.saKeyFile); err != nil {
			return nil, err
		}
	}
	if f.saSigningKey != "" {
		if cfg.ServiceAccountSigningKey, err = pki.LoadKey(f.saSigningKey); err != nil {
			return nil, err
		}
	}
	cfg.APIAudiences = split(f.apiAudiences)
	return cfg, nil
}

// auditLogger opens the audit log, or returns nil when it is off.
func (f *authFlags) auditLogger() (*audit.Logger, io.Closer, error) {
	if f.auditLogPath == "" {
		if f.auditPolicy != "" {
			return nil, nil, fmt.Errorf("--audit-policy-file needs --audit-log-path")
		}
		return nil, io.NopCloser(nil), nil
	}
	policy := audit.MetadataPolicy()
	if f.auditPolicy != "" {
		var err error
		if policy, err = audit.LoadPolicy(f.auditPolicy); err != nil {
			return nil, nil, err
		}
	}
	if f.auditRotation.MaxSizeMB < 0 || f.auditRotation.MaxBackups < 0 || f.auditRotation.MaxAgeDays < 0 {
		return nil, nil, fmt.Errorf("--audit-log-maxsize, --audit-log-maxbackup and --audit-log-maxage cannot be negative")
	}
	if f.auditLogPath == "-" && f.auditRotation != (audit.Rotation{}) {
		return nil, nil, fmt.Errorf("--audit-log-maxsize, --audit-log-maxbackup and --audit-log-maxage need a file as --audit-log-path, not standard output")
	}
	return audit.Open(f.auditLogPath, policy, f.auditRotation)
}

func split(s string) []string {
	var out []string
	for _, p := range strings.Split(s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}
