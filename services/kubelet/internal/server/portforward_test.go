package server

import (
	"context"
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"slices"
	"strconv"
	"testing"

	"k8s.io/cri-streaming/pkg/streaming/portforward"
	"k8s.io/streaming/pkg/httpstream"
	"k8s.io/streaming/pkg/httpstream/spdy"

	"podline.dev/services/kubelet/internal/runtime"
)

// echoServer answers every connection with what it reads until the
// client half-closes, then closes; it stops when the test ends.
func echoServer(t *testing.T) string {
	t.Helper()
	lis, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { lis.Close() })
	go func() {
		for {
			c, err := lis.Accept()
			if err != nil {
				return
			}
			go func() {
				defer c.Close()
				_, _ = io.Copy(c, c)
			}()
		}
	}()
	return lis.Addr().String()
}

// dialPortForward upgrades url to the SPDY port-forward protocol as
// kubectl does.
func dialPortForward(t *testing.T, cfg *tls.Config, url string) (httpstream.Connection, *http.Response) {
	t.Helper()
	rt, err := spdy.NewRoundTripper(cfg)
	if err != nil {
		t.Fatal(err)
	}
	req, _ := http.NewRequest(http.MethodPost, url, nil)
	req.Header.Set(httpstream.HeaderConnection, httpstream.HeaderUpgrade)
	req.Header.Set(httpstream.HeaderUpgrade, spdy.HeaderSpdy31)
	req.Header.Set(httpstream.HeaderProtocolVersion, portforward.ProtocolV1Name)
	resp, err := rt.RoundTrip(req)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		return nil, resp
	}
	conn, err := rt.NewConnection(resp)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { conn.Close() })
	return conn, resp
}

// forward sends msg through one forwarded connection to port, half-closes
// and returns what came back and what the error stream said.
func forward(t *testing.T, conn httpstream.Connection, requestID int, port int32, msg string) (string, string) {
	t.Helper()
	h := http.Header{}
	h.Set(portforward.StreamType, portforward.StreamTypeError)
	h.Set(portforward.PortHeader, strconv.Itoa(int(port)))
	h.Set(portforward.PortForwardRequestIDHeader, strconv.Itoa(requestID))
	errStream, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	errStream.Close() // the client writes nothing on the error stream
	h.Set(portforward.StreamType, portforward.StreamTypeData)
	data, err := conn.CreateStream(h)
	if err != nil {
		t.Fatal(err)
	}
	errc := make(chan string, 1)
	go func() {
		b, _ := io.ReadAll(errStream)
		errc <- string(b)
	}()
	if _, err := io.WriteString(data, msg); err != nil {
		t.Fatal(err)
	}
	data.Close()
	got, _ := io.ReadAll(data)
	return string(got), <-errc
}

func TestPortForwardSplicesEachStreamPairToThePodsPort(t *testing.T) {
	url, hc, rt, _ := setup(t)
	echo := echoServer(t)
	rt.SetPortForwardAddr(func(sb *runtime.Sandbox, port int32) string {
		if sb.Pod.UID == "u1" && port == 8080 {
			return echo
		}
		return "127.0.0.1:1" // nothing listens there
	})
	conn, resp := dialPortForward(t, hc.Transport.(*http.Transport).TLSClientConfig, url+"/portForward/default/web")
	if conn == nil {
		t.Fatalf("upgrade: %s", resp.Status)
	}
	if got := resp.Header.Get(httpstream.HeaderProtocolVersion); got != portforward.ProtocolV1Name {
		t.Fatalf("negotiated %q", got)
	}
	for i, msg := range []string{"GET / HTTP/1.0\r\n\r\n", "second connection"} {
		got, errText := forward(t, conn, i, 8080, msg)
		if got != msg || errText != "" {
			t.Errorf("connection %d: echoed %q, error stream %q", i, got, errText)
		}
	}
	if n := countCalls(rt, "PortForward sandbox-1 8080"); n != 2 {
		t.Errorf("%d PortForward calls on sandbox-1 port 8080, want 2: %q", n, rt.Calls())
	}
	// A port nobody listens on fails that connection alone, on its error
	// stream.
	if _, errText := forward(t, conn, 7, 9999, "x"); errText == "" {
		t.Error("a refused port left the error stream empty")
	}
	if got, _ := forward(t, conn, 8, 8080, "still open"); got != "still open" {
		t.Errorf("after a refused port: %q", got)
	}
}

func TestPortForwardRefusesWhatItCannotReach(t *testing.T) {
	url, hc, rt, _ := setup(t)
	cfg := hc.Transport.(*http.Transport).TLSClientConfig
	for _, c := range []struct {
		name, path string
		code       int
	}{
		{"unknown pod", "/portForward/default/nope", http.StatusNotFound},
		{"another pod's uid", "/portForward/default/web/u2", http.StatusNotFound},
	} {
		if conn, resp := dialPortForward(t, cfg, url+c.path); conn != nil || resp.StatusCode != c.code {
			t.Errorf("%s: %s, want %d", c.name, resp.Status, c.code)
		}
	}
	sbs, _ := rt.ListPodSandboxes(context.Background(), "u1")
	_ = rt.StopPodSandbox(context.Background(), sbs[0].ID)
	if conn, resp := dialPortForward(t, cfg, url+"/portForward/default/web"); conn != nil || resp.StatusCode != http.StatusBadRequest {
		t.Errorf("stopped sandbox: %s, want 400", resp.Status)
	}
}

func countCalls(rt *runtime.Fake, call string) int {
	n := 0
	for _, c := range slices.Clone(rt.Calls()) {
		if c == call {
			n++
		}
	}
	return n
}
