package main

import (
	"bytes"
	"io"
	"log/slog"
	"net/http"
	"net/http/httptest"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func TestHealthzFailsWhileUnreadyFileExists(t *testing.T) {
	unreadyFile = filepath.Join(t.TempDir(), "unready")
	srv := httptest.NewServer(newHandler("web-1", "10.244.1.2", slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	status := func() int {
		resp, err := http.Get(srv.URL + "/healthz")
		if err != nil {
			t.Fatal(err)
		}
		resp.Body.Close()
		return resp.StatusCode
	}
	if got := status(); got != http.StatusOK {
		t.Fatalf("ready: %d, want 200", got)
	}
	if err := os.WriteFile(unreadyFile, nil, 0o644); err != nil {
		t.Fatal(err)
	}
	if got := status(); got != http.StatusServiceUnavailable {
		t.Fatalf("with %s: %d, want 503", unreadyFile, got)
	}
}

func TestGetPrintsOneLinePerRequest(t *testing.T) {
	srv := httptest.NewServer(newHandler("web-1", "10.244.1.2", slog.New(slog.NewTextHandler(io.Discard, nil))))
	defer srv.Close()
	var out, errb bytes.Buffer
	if code := client([]string{"get", "-n", "3", srv.URL + "/"}, &out, &errb); code != 0 {
		t.Fatalf("exit %d: %s", code, errb.String())
	}
	lines := strings.Split(strings.TrimSpace(out.String()), "\n")
	if len(lines) != 3 || lines[0] != "hello from web-1 at 10.244.1.2" {
		t.Errorf("got %q", lines)
	}
}

func TestGetFailsOnRefusedAndNotFound(t *testing.T) {
	srv := httptest.NewServer(newHandler("web-1", "10.244.1.2", slog.New(slog.NewTextHandler(io.Discard, nil))))
	var out, errb bytes.Buffer
	if code := client([]string{"get", srv.URL + "/missing"}, &out, &errb); code != 1 {
		t.Errorf("404: exit %d, want 1", code)
	}
	srv.Close()
	if code := client([]string{"get", srv.URL + "/"}, &out, &errb); code != 1 {
		t.Errorf("refused: exit %d, want 1", code)
	}
}

func TestLookupResolvesLocalhost(t *testing.T) {
	var out, errb bytes.Buffer
	if code := client([]string{"lookup", "localhost"}, &out, &errb); code != 0 {
		t.Skipf("no resolver for localhost here: %s", errb.String())
	}
	if !strings.Contains(out.String(), "127.0.0.1") && !strings.Contains(out.String(), "::1") {
		t.Errorf("localhost: %q", out.String())
	}
}
