package secureserving_test

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"flag"
	"io"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// securePort serves "metrics" on /metrics and "ok" on /healthz behind the
// flags a scheduler is started with, against a real apiserver, and
// returns its URL.
func securePort(t *testing.T, api *apiservertest.Server) string {
	t.Helper()
	// The scheduler's kubeconfig, pointed at this apiserver.
	conf, err := os.ReadFile(filepath.Join(api.PKI, "kubeconfigs", "scheduler.conf"))
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "scheduler.conf")
	if err := os.WriteFile(kubeconfig, []byte(strings.ReplaceAll(string(conf), "https://apiserver:6443", api.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	var o secureserving.Options
	fs := flag.NewFlagSet("scheduler", flag.ContinueOnError)
	o.BindFlags(fs, 10259)
	dir := filepath.Join(api.PKI, pki.SchedulerServingDir)
	if err := fs.Parse([]string{"--bind-address=127.0.0.1", "--secure-port=1",
		"--tls-cert-file=" + filepath.Join(dir, "serving.crt"), "--tls-private-key-file=" + filepath.Join(dir, "serving.key"),
		"--client-ca-file=" + filepath.Join(api.PKI, "ca.crt")}); err != nil {
		t.Fatal(err)
	}
	tlsCfg, cfg, err := o.Config(kubeconfig)
	if err != nil {
		t.Fatal(err)
	}
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	mux := http.NewServeMux()
	mux.HandleFunc("/metrics", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "metrics") })
	mux.HandleFunc("/healthz", func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") })
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- secureserving.Serve(ctx, tls.NewListener(lis, tlsCfg), cfg.Handler(mux)) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("Serve: %v", err)
		}
	})
	return "https://" + lis.Addr().String()
}

// The secure port answers /metrics to clients the apiserver allows
// (system:masters, the group system:monitoring), by certificate or by
// ServiceAccount token, 403 to authenticated clients it does not allow,
// 401 to anyone else; /healthz answers anyone.
func TestSecurePortAuthenticatesAndAuthorizesByTheApiserver(t *testing.T) {
	api := apiservertest.StartSecure(t)
	url := securePort(t, api)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sa, err := client.For[*corev1.ServiceAccount](api.Conn).Get(ctx, "default", "default")
	if err != nil {
		t.Fatal(err)
	}
	token := api.ServiceAccountToken(t, "default", "default", sa.GetMetadata().GetUid(), time.Hour)

	// A CA of its own, not the cluster's: its certificates prove nothing.
	other := t.TempDir()
	if _, err := pki.Generate(pki.WithDir(other), pki.WithKubeconfigDir(filepath.Join(other, "kubeconfigs")),
		pki.WithAdminKubeconfig(filepath.Join(other, "kubeconfig")), pki.WithNodes("node-1"), pki.WithEtcdMembers("etcd-1")); err != nil {
		t.Fatal(err)
	}
	forgedAdmin := client.Credentials{CAFile: filepath.Join(api.PKI, "ca.crt"),
		CertFile: filepath.Join(other, "admin.crt"), KeyFile: filepath.Join(other, "admin.key")}
	anonymous := client.Credentials{CAFile: filepath.Join(api.PKI, "ca.crt")}

	for _, tc := range []struct {
		name    string
		creds   client.Credentials
		path    string
		want    int
		message string
	}{
		{"anonymous metrics", anonymous, "/metrics", http.StatusUnauthorized, "Unauthorized"},
		{"anonymous healthz", anonymous, "/healthz", http.StatusOK, ""},
		{"a certificate of another CA", forgedAdmin, "/metrics", http.StatusUnauthorized, "Unauthorized"},
		{"a forged token", api.TokenCredentials("not-a-token"), "/metrics", http.StatusUnauthorized, "Unauthorized"},
		{"jane without a role", api.Credentials(t, "jane", "developers"), "/metrics", http.StatusForbidden,
			`forbidden: User "jane" cannot get path "/metrics"`},
		{"a kubelet", api.NodeCredentials("node-1"), "/metrics", http.StatusForbidden,
			`forbidden: User "system:node:node-1" cannot get path "/metrics"`},
		{"the default ServiceAccount's token", api.TokenCredentials(token), "/metrics", http.StatusForbidden,
			`forbidden: User "system:serviceaccount:default:default" cannot get path "/metrics"`},
		{"an administrator", api.Credentials(t, "root", "system:masters"), "/metrics", http.StatusOK, ""},
		{"a member of system:monitoring", api.Credentials(t, "prometheus", "system:monitoring"), "/metrics", http.StatusOK, ""},
		{"system:monitoring cannot post", api.Credentials(t, "prometheus", "system:monitoring"), "/metrics#post", http.StatusForbidden,
			`forbidden: User "prometheus" cannot post path "/metrics"`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			hc := api.HTTPClientWith(t, tc.creds)
			path, post := strings.CutSuffix(tc.path, "#post")
			var resp *http.Response
			var err error
			if post {
				resp, err = hc.Post(url+path, "text/plain", nil)
			} else {
				resp, err = hc.Get(url + path)
			}
			if err != nil {
				t.Fatal(err)
			}
			body, _ := io.ReadAll(resp.Body)
			_ = resp.Body.Close()
			if resp.StatusCode != tc.want {
				t.Fatalf("%d %s, want %d", resp.StatusCode, body, tc.want)
			}
			if tc.message == "" {
				return
			}
			var st struct {
				Kind, Message string
				Code          int
			}
			if err := json.Unmarshal(body, &st); err != nil || st.Kind != "Status" || st.Message != tc.message || st.Code != tc.want {
				t.Errorf("body %s (%v), want a Status %d with message %q", body, err, tc.want, tc.message)
			}
		})
	}
}

// A TokenReview answered by the real apiserver gives the token's user with
// its uid (the ServiceAccount's), which the component then sends on in its
// SubjectAccessReviews.
func TestTokenReviewsNameTheUserWithItsUID(t *testing.T) {
	api := apiservertest.StartSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	sa, err := client.For[*corev1.ServiceAccount](api.Conn).Get(ctx, "default", "default")
	if err != nil {
		t.Fatal(err)
	}
	uid := sa.GetMetadata().GetUid()
	reviews := secureserving.NewTokenReviews(api.URL, api.HTTPClientWith(t, api.Credentials(t, "root", "system:masters")))
	u, ok, err := reviews.AuthenticateToken(ctx, api.ServiceAccountToken(t, "default", "default", uid, time.Hour))
	if err != nil || !ok {
		t.Fatalf("authenticated %v: %v", ok, err)
	}
	if u.Name != "system:serviceaccount:default:default" || u.UID != uid {
		t.Fatalf("user %+v, want the default account with uid %s", u, uid)
	}
}
