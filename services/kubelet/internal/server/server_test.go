package server

import (
	"context"
	"crypto/tls"
	"encoding/json"
	"io"
	"log/slog"
	"net"
	"net/http"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/gorilla/websocket"

	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/runtime"
)

type pods map[string]*corev1.Pod

func (p pods) Pod(ns, name string) (*corev1.Pod, bool) {
	pod, ok := p[ns+"/"+name]
	return pod, ok
}

// testNode is the node the servers under test belong to.
const testNode = "node-1"

// newPKI makes the cluster's identity in a temporary directory: the
// cluster CA, testNode's serving certificate and the apiserver's kubelet
// client certificate.
func newPKI(t *testing.T) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := pki.Generate(pki.WithDir(dir), pki.WithNodes(testNode), pki.WithEtcdMembers(),
		pki.WithKubeconfigDir(filepath.Join(dir, "kubeconfigs")), pki.WithAdminKubeconfig(filepath.Join(dir, "kubeconfig"))); err != nil {
		t.Fatal(err)
	}
	return dir
}

// serve runs s over real TLS on a loopback port until the test ends and
// returns its base URL.
func serve(t *testing.T, s *Server) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- s.ServeListener(ctx, lis) }()
	t.Cleanup(func() {
		cancel()
		if err := <-done; err != nil {
			t.Errorf("serve: %v", err)
		}
	})
	return "https://" + lis.Addr().String()
}

// tlsFor trusts the cluster CA and presents the certificate <name>.crt
// from dir ("" presents none).
func tlsFor(t *testing.T, dir, name string) *tls.Config {
	t.Helper()
	ca, err := pki.LoadCertPool(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	cfg := &tls.Config{RootCAs: ca, MinVersion: tls.VersionTLS12}
	if name != "" {
		pair, err := tls.LoadX509KeyPair(filepath.Join(dir, name+".crt"), filepath.Join(dir, name+".key"))
		if err != nil {
			t.Fatal(err)
		}
		cfg.Certificates = []tls.Certificate{pair}
	}
	return cfg
}

func httpClient(cfg *tls.Config) *http.Client {
	return &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{TLSClientConfig: cfg}}
}

// kubeletConfig is testNode's serving configuration over dir.
func kubeletConfig(t *testing.T, dir string, z secureserving.Authorizer) Config {
	t.Helper()
	ca, err := pki.LoadCertPool(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	return Config{
		CertFile:   filepath.Join(dir, pki.KubeletServingCertName(testNode)+".crt"),
		KeyFile:    filepath.Join(dir, pki.KubeletServingCertName(testNode)+".key"),
		ClientCA:   ca,
		NodeName:   testNode,
		Authorizer: z,
	}
}

// onlyTheAPIServer allows the apiserver's kubelet client identity alone.
var onlyTheAPIServer = secureserving.AuthorizerFunc(func(_ context.Context, a secureserving.Attributes) (secureserving.Decision, error) {
	return secureserving.Decision{Allowed: a.User.Name == pki.APIServerKubeletClientUser}, nil
})

// setup runs a server over a fake runtime with pod web: its container
// "c" ran once (attempt 0, exited) and runs again (attempt 1). The client
// is the apiserver's, which the server's authorizer allows.
func setup(t *testing.T) (string, *http.Client, *runtime.Fake, string) {
	t.Helper()
	dir := newPKI(t)
	url, rt, path := setupWith(t, kubeletConfig(t, dir, onlyTheAPIServer))
	return url, httpClient(tlsFor(t, dir, "apiserver-kubelet-client")), rt, path
}

// setupWith runs a server with cfg over the fake runtime of setup.
func setupWith(t *testing.T, cfg Config) (string, *runtime.Fake, string) {
	t.Helper()
	rt := runtime.NewFake(nil)
	rt.AddImage("img:1", 1)
	dir := t.TempDir()
	ctx := context.Background()
	sb, _ := rt.RunPodSandbox(ctx, &runtime.SandboxConfig{Pod: runtime.PodRef{UID: "u1", Name: "web", Namespace: "default"}})
	for attempt, content := range []string{
		criLog("stderr F first run"),
		criLog("stdout F line 1", "stdout P line ", "stdout F 2", "stderr F line 3"),
	} {
		p := filepath.Join(dir, "c", string(rune('0'+attempt))+".log")
		_ = os.MkdirAll(filepath.Dir(p), 0o755)
		_ = os.WriteFile(p, []byte(content), 0o644)
		id, _ := rt.CreateContainer(ctx, sb, &runtime.ContainerConfig{Name: "c", Image: "img:1", Attempt: attempt, LogPath: p})
		_ = rt.StartContainer(ctx, id)
		if attempt == 0 {
			rt.Exit(id, 1)
		}
	}
	pod := &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default", Uid: "u1"}}
	s := New(cfg, pods{"default/web": pod}, rt, slog.New(slog.NewTextHandler(io.Discard, nil)))
	return serve(t, s), rt, filepath.Join(dir, "c", "1.log")
}

func get(t *testing.T, hc *http.Client, url string) (int, string) {
	t.Helper()
	resp, err := hc.Get(url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	return resp.StatusCode, string(b)
}

// criLog is a CRI log file of records ("stdout F text"), a second apart
// from logT0.
func criLog(records ...string) string {
	var b strings.Builder
	for i, r := range records {
		b.WriteString(logT0.Add(time.Duration(i)*time.Second).Format(time.RFC3339Nano) + " " + r + "\n")
	}
	return b.String()
}

var logT0 = time.Date(2026, 12, 1, 10, 0, 0, 123456789, time.UTC)

func TestLogs(t *testing.T) {
	url, hc, _, _ := setup(t)
	base := url + "/containerLogs/default/web/c"
	for _, tc := range []struct {
		query string
		code  int
		body  string
	}{
		{"", 200, "line 1\nline 2\nline 3\n"},
		{"?tailLines=1", 200, "line 3\n"},
		{"?tailLines=0", 200, ""},
		{"?limitBytes=6", 200, "line 1"},
		{"?previous=true", 200, "first run\n"},
		{"?timestamps=true&tailLines=3", 200, "2026-12-01T10:00:01.123456789Z line 2026-12-01T10:00:02.123456789Z 2\n2026-12-01T10:00:03.123456789Z line 3\n"},
		{"?sinceTime=2026-12-01T10:00:03Z", 200, "line 3\n"},
	} {
		code, body := get(t, hc, base+tc.query)
		if code != tc.code || body != tc.body {
			t.Errorf("%q: %d %q, want %d %q", tc.query, code, body, tc.code, tc.body)
		}
	}
	if code, _ := get(t, hc, url+"/containerLogs/default/nope/c"); code != 404 {
		t.Errorf("unknown pod: %d", code)
	}
}

func TestLogsFollowStreamsWhatIsAppended(t *testing.T) {
	url, hc, _, path := setup(t)
	resp, err := hc.Get(url + "/containerLogs/default/web/c?follow=true&tailLines=1")
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	buf := make([]byte, 64)
	n, _ := io.ReadAtLeast(resp.Body, buf, len("line 3\n"))
	if string(buf[:n]) != "line 3\n" {
		t.Fatalf("tail %q", buf[:n])
	}
	f, _ := os.OpenFile(path, os.O_APPEND|os.O_WRONLY, 0)
	_, _ = f.WriteString(criLog("stdout F line 4"))
	f.Close()
	done := make(chan string)
	go func() {
		n, _ := io.ReadAtLeast(resp.Body, buf, len("line 4\n"))
		done <- string(buf[:n])
	}()
	select {
	case got := <-done:
		if got != "line 4\n" {
			t.Fatalf("followed %q", got)
		}
	case <-time.After(5 * time.Second):
		t.Fatal("nothing followed")
	}
}

func TestExecWithoutAnUpgradeAnswersTheOutput(t *testing.T) {
	url, hc, rt, _ := setup(t)
	rt.SetExecFunc(func(c *runtime.Container, cmd []string) (*runtime.ExecResult, error) {
		return &runtime.ExecResult{Stdout: []byte(strings.Join(cmd, " ")), ExitCode: 3}, nil
	})
	resp, err := hc.Post(url+"/exec/default/web/c?command=echo&command=hi", "", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	b, _ := io.ReadAll(resp.Body)
	if string(b) != "echo hi" || resp.Header.Get("X-Exit-Code") != "3" {
		t.Fatalf("%q exit %s", b, resp.Header.Get("X-Exit-Code"))
	}
}

func TestExecOverTheChannelProtocol(t *testing.T) {
	url, hc, rt, _ := setup(t)
	rt.SetExecFunc(func(c *runtime.Container, cmd []string) (*runtime.ExecResult, error) {
		return &runtime.ExecResult{Stdout: []byte("out"), Stderr: []byte("err"), ExitCode: 2}, nil
	})
	d := websocket.Dialer{Subprotocols: []string{ProtocolV5}, TLSClientConfig: hc.Transport.(*http.Transport).TLSClientConfig}
	conn, resp, err := d.Dial("wss"+strings.TrimPrefix(url, "https")+"/exec/default/web/c?command=sh&stdout=1&stderr=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	if resp.Header.Get("Sec-WebSocket-Protocol") != ProtocolV5 {
		t.Fatalf("protocol %q", resp.Header.Get("Sec-WebSocket-Protocol"))
	}
	streams := map[byte]string{}
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			break
		}
		streams[msg[0]] += string(msg[1:])
	}
	if streams[streamStdout] != "out" || streams[streamStderr] != "err" {
		t.Fatalf("streams %q", streams)
	}
	var st status
	if err := json.Unmarshal([]byte(streams[streamError]), &st); err != nil || st.Status != "Failure" || st.Reason != "NonZeroExitCode" ||
		st.Details.Causes[0].Message != "2" {
		t.Fatalf("status %s (%v)", streams[streamError], err)
	}
}
