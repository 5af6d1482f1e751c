package healthprobe

import (
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

func TestCheck(t *testing.T) {
	ok := httptest.NewTLSServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { _, _ = io.WriteString(w, "ok") }))
	defer ok.Close()
	down := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) { w.WriteHeader(http.StatusServiceUnavailable) }))
	defer down.Close()
	if !Check(ok.URL, io.Discard) {
		t.Error("a 200 over https (self-signed) failed the probe")
	}
	if Check(down.URL, io.Discard) {
		t.Error("a 503 passed the probe")
	}
	if Check("http://127.0.0.1:1/", io.Discard) {
		t.Error("a refused connection passed the probe")
	}
}
