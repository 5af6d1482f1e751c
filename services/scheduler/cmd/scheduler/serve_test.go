package main

import (
	"context"
	"errors"
	"flag"
	"io"
	"log/slog"
	"net/http"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	"podline.dev/pkg/testenv"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/scheduler/internal/metrics"
)

func parse(t *testing.T, args ...string) flags {
	t.Helper()
	var f flags
	fs := flag.NewFlagSet("scheduler", flag.ContinueOnError)
	f.bind(fs)
	if err := fs.Parse(args); err != nil {
		t.Fatal(err)
	}
	return f
}

// The scheduler's flags, as compose passes them, serve /metrics over HTTPS
// to a client the apiserver allows and to no one else, the health paths
// to anyone there, and the health paths alone in plain HTTP on loopback.
func TestSchedulerServesMetricsOnItsSecurePort(t *testing.T) {
	api := apiservertest.StartSecure(t)
	conf, err := os.ReadFile(filepath.Join(api.PKI, "kubeconfigs", "scheduler.conf"))
	if err != nil {
		t.Fatal(err)
	}
	kubeconfig := filepath.Join(t.TempDir(), "scheduler.conf")
	if err := os.WriteFile(kubeconfig, []byte(strings.ReplaceAll(string(conf), "https://apiserver:6443", api.URL)), 0o600); err != nil {
		t.Fatal(err)
	}
	dir := filepath.Join(api.PKI, pki.SchedulerServingDir)
	secure, plain := testenv.FreePort(t), testenv.FreePort(t)
	f := parse(t, "--kubeconfig="+kubeconfig, "--bind-address=127.0.0.1", "--secure-port="+strconv.Itoa(secure),
		"--tls-cert-file="+filepath.Join(dir, "serving.crt"), "--tls-private-key-file="+filepath.Join(dir, "serving.key"),
		"--client-ca-file="+filepath.Join(api.PKI, "ca.crt"), "--healthz-bind-address=127.0.0.1:"+strconv.Itoa(plain))
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	m := metrics.New()
	m.ScheduleAttempts.WithLabelValues("scheduled", "default-scheduler").Inc()
	if err := serve(ctx, f, m, slog.New(slog.DiscardHandler)); err != nil {
		t.Fatal(err)
	}

	base := "https://127.0.0.1:" + strconv.Itoa(secure)
	admin := api.HTTPClientWith(t, api.Credentials(t, "root", "system:masters"))
	anonymous := api.HTTPClientWith(t, api.TokenCredentials(""))
	get := func(c *http.Client, url string) (int, string) {
		t.Helper()
		resp, err := c.Get(url)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		body, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(body)
	}
	if code, body := get(admin, base+"/metrics"); code != http.StatusOK || !strings.Contains(body, "scheduler_schedule_attempts_total") {
		t.Errorf("admin /metrics: %d\n%.300s", code, body)
	}
	if code, _ := get(anonymous, base+"/metrics"); code != http.StatusUnauthorized {
		t.Errorf("anonymous /metrics: %d, want 401", code)
	}
	if code, _ := get(api.HTTPClientWith(t, api.NodeCredentials("node-1")), base+"/metrics"); code != http.StatusForbidden {
		t.Errorf("a kubelet's /metrics: %d, want 403", code)
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if code, _ := get(anonymous, base+p); code != http.StatusOK {
			t.Errorf("anonymous %s: %d, want 200", p, code)
		}
		if code, _ := get(http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(plain)+p); code != http.StatusOK {
			t.Errorf("plain %s: %d, want 200", p, code)
		}
	}
	if code, _ := get(http.DefaultClient, "http://127.0.0.1:"+strconv.Itoa(plain)+"/metrics"); code != http.StatusNotFound {
		t.Errorf("plain /metrics: %d, want 404", code)
	}
}

// Nothing is served in plain text off loopback, and no secure port
// without its certificate.
func TestSchedulerRefusesInsecureServing(t *testing.T) {
	m := metrics.New()
	log := slog.New(slog.DiscardHandler)
	ctx := context.Background()
	if err := serve(ctx, parse(t, "--secure-port=0", "--healthz-bind-address=0.0.0.0:10251"), m, log); !errors.Is(err, secureserving.ErrNotLoopback) {
		t.Errorf("plain health on every address: %v, want %v", err, secureserving.ErrNotLoopback)
	}
	if err := serve(ctx, parse(t), m, log); !errors.Is(err, secureserving.ErrNoServingCertificate) {
		t.Errorf("the default secure port without a certificate: %v, want %v", err, secureserving.ErrNoServingCertificate)
	}
}
