package test

import (
	"bufio"
	"crypto/tls"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// spdyKubeletStub answers /portForward as a kubelet's SPDY upgrade does
// (101 with Upgrade: SPDY/3.1 and the chosen stream protocol) and then
// echoes the bytes of the upgraded connection: the apiserver relays bytes,
// so the SPDY framing itself is the kubelet's tests' concern. A pod named
// "gone" gets the kubelet's 404.
type spdyKubeletStub struct{ kubeletStub }

func (k *spdyKubeletStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, fmt.Sprintf("%s %s upgrade=%s protocols=%s auth=%s client=%s", r.Method, r.URL.RequestURI(),
		r.Header.Get("Upgrade"), strings.Join(r.Header.Values("X-Stream-Protocol-Version"), ","), r.Header.Get("Authorization"),
		r.TLS.PeerCertificates[0].Subject.CommonName))
	k.mu.Unlock()
	if strings.HasSuffix(r.URL.Path, "/gone") {
		http.Error(w, "pod default/gone not found", http.StatusNotFound)
		return
	}
	if !strings.EqualFold(r.Header.Get("Upgrade"), "SPDY/3.1") {
		http.Error(w, "unable to upgrade: missing upgrade headers in request", http.StatusBadRequest)
		return
	}
	conn, rw, err := http.NewResponseController(w).Hijack()
	if err != nil {
		return
	}
	defer conn.Close()
	_, _ = rw.WriteString("HTTP/1.1 101 Switching Protocols\r\nConnection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\n\r\n")
	_ = rw.Flush()
	buf := make([]byte, 4096)
	for {
		n, err := rw.Read(buf)
		if n > 0 {
			_, _ = rw.Write(buf[:n])
			_ = rw.Flush()
		}
		if err != nil {
			return
		}
	}
}

// portForwardCluster runs a secure apiserver whose node-1 kubelet is stub,
// with pod p (one container) and pod gone bound to node-1.
func portForwardCluster(t *testing.T) (*apiservertest.Server, *spdyKubeletStub) {
	t.Helper()
	s := apiservertest.StartSecure(t)
	stub := &spdyKubeletStub{}
	registerNode(t, s, "node-1", startKubeletStub(t, s, "node-1", stub), &corev1.NodeAddress{Type: "Hostname", Address: "localhost"})
	for _, name := range []string{"p", "gone"} {
		p := pod(name, nil)
		p.Spec.NodeName = "node-1"
		if _, err := client.Pods(s.Conn).Create(ctxFor(t), p); err != nil {
			t.Fatal(err)
		}
	}
	return s, stub
}

func tlsOf(t *testing.T, c client.Credentials) *tls.Config {
	t.Helper()
	cfg, err := c.TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	return cfg
}

// kubectl's first try: a WebSocket asking for SPDY/3.1+portforward.k8s.io.
// The apiserver upgrades to SPDY at the kubelet as its kubelet client,
// offering portforward.k8s.io, accepts the tunnel with the protocol the
// kubelet chose, and carries binary messages both ways.
func TestPortForwardTunnelsTheWebSocketToTheKubeletsSPDY(t *testing.T) {
	s, stub := portForwardCluster(t)
	d := websocket.Dialer{TLSClientConfig: tlsOf(t, s.Credentials(t, "root", "system:masters")), Subprotocols: []string{"SPDY/3.1+portforward.k8s.io"}}
	ws, resp, err := d.Dial("wss"+strings.TrimPrefix(s.URL, "https")+"/api/v1/namespaces/default/pods/p/portforward", nil)
	if err != nil {
		t.Fatalf("dial: %v %v", resp, err)
	}
	defer ws.Close()
	if got := ws.Subprotocol(); got != "SPDY/3.1+portforward.k8s.io" {
		t.Fatalf("subprotocol %q", got)
	}
	if got, want := stub.last(), "POST /portForward/default/p upgrade=SPDY/3.1 protocols=portforward.k8s.io auth= client=kube-apiserver-kubelet-client"; got != want {
		t.Errorf("kubelet saw %q, want %q", got, want)
	}
	for _, msg := range []string{"spdy frame 1", strings.Repeat("x", 100<<10)} {
		if err := ws.WriteMessage(websocket.BinaryMessage, []byte(msg)); err != nil {
			t.Fatal(err)
		}
		var got []byte
		for len(got) < len(msg) {
			typ, b, err := ws.ReadMessage()
			if err != nil {
				t.Fatal(err)
			}
			if typ != websocket.BinaryMessage {
				t.Fatalf("message type %d", typ)
			}
			got = append(got, b...)
		}
		if string(got) != msg {
			t.Fatalf("echoed %d bytes, want %d", len(got), len(msg))
		}
	}
}

// The fallback: an SPDY upgrade goes through to the kubelet as it came
// and the upgraded connection is relayed.
func TestPortForwardRelaysTheSPDYUpgrade(t *testing.T) {
	s, stub := portForwardCluster(t)
	cfg := tlsOf(t, s.Credentials(t, "root", "system:masters"))
	cfg.NextProtos = []string{"http/1.1"}
	conn, err := tls.Dial("tcp", strings.TrimPrefix(s.URL, "https://"), cfg)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	_, _ = io.WriteString(conn, "POST /api/v1/namespaces/default/pods/p/portforward HTTP/1.1\r\nHost: apiserver\r\n"+
		"Connection: Upgrade\r\nUpgrade: SPDY/3.1\r\nX-Stream-Protocol-Version: portforward.k8s.io\r\nContent-Length: 0\r\n\r\n")
	br := bufio.NewReader(conn)
	resp, err := http.ReadResponse(br, nil)
	if err != nil {
		t.Fatal(err)
	}
	if resp.StatusCode != http.StatusSwitchingProtocols || resp.Header.Get("X-Stream-Protocol-Version") != "portforward.k8s.io" {
		t.Fatalf("%s %v", resp.Status, resp.Header)
	}
	if got, want := stub.last(), "POST /portForward/default/p upgrade=SPDY/3.1 protocols=portforward.k8s.io auth= client=kube-apiserver-kubelet-client"; got != want {
		t.Errorf("kubelet saw %q, want %q", got, want)
	}
	_, _ = io.WriteString(conn, "spdy bytes")
	got := make([]byte, len("spdy bytes"))
	if _, err := io.ReadFull(br, got); err != nil || string(got) != "spdy bytes" {
		t.Fatalf("echoed %q (%v)", got, err)
	}
}

// pods/portforward is create on that subresource: a user without it gets
// the apiserver's 403 and the kubelet sees nothing; a kubelet's refusal
// reaches the client as the kubelet answered it.
func TestPortForwardIsAuthorizedAndRefusalsPassThrough(t *testing.T) {
	s, stub := portForwardCluster(t)
	url := s.URL + "/api/v1/namespaces/default/pods/"
	ws := "wss" + strings.TrimPrefix(url, "https")
	alice := tlsOf(t, s.Credentials(t, "alice", "devs"))
	d := websocket.Dialer{TLSClientConfig: alice, Subprotocols: []string{"SPDY/3.1+portforward.k8s.io"}}
	_, resp, err := d.Dial(ws+"p/portforward", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusForbidden {
		t.Fatalf("alice's tunnel: %v %v", resp, err)
	}
	body, _ := io.ReadAll(resp.Body)
	if want := `pods \"p\" is forbidden: User \"alice\" cannot create resource \"pods/portforward\" in API group \"\" in the namespace \"default\"`; !strings.Contains(string(body), want) {
		t.Errorf("403 body %s, want %s", body, want)
	}
	code, st := restDo(t, s.HTTPClientWith(t, s.Credentials(t, "alice", "devs")), "POST", url+"p/portforward", nil)
	if code != http.StatusForbidden || st["reason"] != "Forbidden" {
		t.Errorf("alice's POST: %d %v", code, st)
	}
	if got := stub.last(); got != "" {
		t.Fatalf("the kubelet saw %q", got)
	}

	d.TLSClientConfig = tlsOf(t, s.Credentials(t, "root", "system:masters"))
	_, resp, err = d.Dial(ws+"gone/portforward", nil)
	if err == nil || resp == nil || resp.StatusCode != http.StatusNotFound {
		t.Fatalf("tunnel to gone: %v %v", resp, err)
	}
	if body, _ := io.ReadAll(resp.Body); !strings.Contains(string(body), "pod default/gone not found") {
		t.Errorf("404 body %q", body)
	}
}
