package test

import (
	"crypto/tls"
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"testing"

	"podline.dev/pkg/client"
	"podline.dev/pkg/pki"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// kubeletStub stands in for a kubelet's /containerLogs and /exec server
// (the kubelet's own tests cover that server; here the apiserver's side
// of the relay is under test) and records what reached it and who sent it.
type kubeletStub struct {
	mu   sync.Mutex
	reqs []string
}

func (k *kubeletStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	client := "anonymous"
	if r.TLS != nil && len(r.TLS.PeerCertificates) > 0 {
		client = r.TLS.PeerCertificates[0].Subject.CommonName
	}
	k.mu.Lock()
	k.reqs = append(k.reqs, r.Method+" "+r.URL.RequestURI()+" auth="+r.Header.Get("Authorization")+" client="+client)
	k.mu.Unlock()
	_, _ = io.WriteString(w, "from the kubelet: "+r.URL.Path+"\n")
}

func (k *kubeletStub) last() string {
	k.mu.Lock()
	defer k.mu.Unlock()
	if len(k.reqs) == 0 {
		return ""
	}
	return k.reqs[len(k.reqs)-1]
}

// startKubeletStub serves stub over HTTPS as a kubelet does: with node's
// serving certificate from the cluster's PKI, and only to clients whose
// certificate the cluster CA signed.
func startKubeletStub(t *testing.T, s *apiservertest.Server, node string, stub http.Handler) (port int) {
	t.Helper()
	dir := filepath.Join(s.PKI, pki.KubeletServingDir(node))
	pair, err := tls.LoadX509KeyPair(filepath.Join(dir, "kubelet.crt"), filepath.Join(dir, "kubelet.key"))
	if err != nil {
		t.Fatal(err)
	}
	ca, err := pki.LoadCertPool(filepath.Join(dir, "ca.crt"))
	if err != nil {
		t.Fatal(err)
	}
	srv := httptest.NewUnstartedServer(stub)
	srv.TLS = &tls.Config{Certificates: []tls.Certificate{pair}, ClientCAs: ca, ClientAuth: tls.RequireAndVerifyClientCert}
	srv.StartTLS()
	t.Cleanup(srv.Close)
	return portOf(t, srv.URL)
}

func portOf(t *testing.T, rawURL string) int {
	t.Helper()
	_, p, err := net.SplitHostPort(strings.TrimPrefix(rawURL, "https://"))
	if err != nil {
		t.Fatal(err)
	}
	port, _ := strconv.Atoi(p)
	return port
}

// registerNode creates a Node with addresses and a kubelet port.
func registerNode(t *testing.T, s *apiservertest.Server, name string, port int, addrs ...*corev1.NodeAddress) {
	t.Helper()
	ctx := ctxFor(t)
	nodes := client.Nodes(s.Conn)
	n, err := nodes.Create(ctx, &corev1.Node{Metadata: &metav1.ObjectMeta{Name: name}})
	if err != nil {
		t.Fatal(err)
	}
	n.Status = &corev1.NodeStatus{
		Addresses:       addrs,
		DaemonEndpoints: &corev1.NodeDaemonEndpoints{KubeletEndpoint: &corev1.DaemonEndpoint{Port: int32(port)}},
	}
	if _, err := nodes.UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
}

// pods/log and pods/exec reach the kubelet of the Pod's node over HTTPS at
// the node's preferred address (Hostname before InternalIP) and kubelet
// port, with the client's query, without its credentials, and as the
// apiserver's own kubelet client identity, which the kubelet verifies.
func TestPodLogAndExecReachTheKubelet(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	pods := client.Pods(s.Conn)
	stub := &kubeletStub{}
	port := startKubeletStub(t, s, "node-1", stub)
	// Nothing listens on 127.0.0.2: only the Hostname reaches the stub.
	registerNode(t, s, "node-1", port,
		&corev1.NodeAddress{Type: "InternalIP", Address: "127.0.0.2"}, &corev1.NodeAddress{Type: "Hostname", Address: "localhost"})
	p := pod("p", nil)
	p.Spec.NodeName = "node-1"
	if _, err := pods.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	two := pod("two", nil)
	two.Spec.NodeName = "node-1"
	two.Spec.Containers = append(two.Spec.Containers, &corev1.Container{Name: "side", Image: "x"})
	if _, err := pods.Create(ctx, two); err != nil {
		t.Fatal(err)
	}
	unbound := pod("unbound", nil)
	if _, err := pods.Create(ctx, unbound); err != nil {
		t.Fatal(err)
	}

	hc := s.HTTPClientWith(t, s.Credentials(t, "root", "system:masters"))
	get := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL+path, nil)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, string(b)
	}

	code, body := get("GET", "/api/v1/namespaces/default/pods/p/log?tailLines=5&follow=true")
	if code != 200 || body != "from the kubelet: /containerLogs/default/p/web\n" {
		t.Fatalf("log: %d %q", code, body)
	}
	if got, want := stub.last(), "GET /containerLogs/default/p/web?tailLines=5&follow=true auth= client=kube-apiserver-kubelet-client"; got != want {
		t.Errorf("kubelet saw %q, want %q", got, want)
	}
	code, body = get("POST", "/api/v1/namespaces/default/pods/two/exec?container=side&command=hostname&stdout=true")
	if code != 200 || !strings.Contains(body, "/exec/default/two/side") {
		t.Fatalf("exec: %d %q", code, body)
	}
	if got, want := stub.last(), "POST /exec/default/two/side?container=side&command=hostname&stdout=true auth= client=kube-apiserver-kubelet-client"; got != want {
		t.Errorf("kubelet saw %q, want %q", got, want)
	}

	for _, c := range []struct {
		path string
		code int
		msg  string
	}{
		{"/api/v1/namespaces/default/pods/two/log", 400, "a container name must be specified for pod two"},
		{"/api/v1/namespaces/default/pods/unbound/log", 400, "pod unbound does not have a host assigned"},
		{"/api/v1/namespaces/default/pods/missing/log", 404, `pods \"missing\" not found`},
	} {
		code, body := get("GET", c.path)
		if code != c.code || !strings.Contains(body, c.msg) || !strings.Contains(body, `"kind":"Status"`) {
			t.Errorf("GET %s: %d %s, want %d with %q", c.path, code, body, c.code, c.msg)
		}
	}
}

// A kubelet whose serving certificate the cluster CA did not sign is not
// trusted with the request: the client gets a 503 and the kubelet sees
// nothing.
func TestPodLogRefusesAKubeletItCannotVerify(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	stub := &kubeletStub{}
	impostor := httptest.NewTLSServer(stub) // httptest's own certificate
	t.Cleanup(impostor.Close)
	registerNode(t, s, "node-1", portOf(t, impostor.URL), &corev1.NodeAddress{Type: "InternalIP", Address: "127.0.0.1"})
	p := pod("p", nil)
	p.Spec.NodeName = "node-1"
	if _, err := client.Pods(s.Conn).Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	hc := s.HTTPClientWith(t, s.Credentials(t, "root", "system:masters"))
	code, st := restDo(t, hc, "GET", s.URL+"/api/v1/namespaces/default/pods/p/log", nil)
	msg, _ := st["message"].(string)
	if code != 503 || !strings.Contains(msg, "error dialing the kubelet of pod default/p") || !strings.Contains(msg, "certificate") {
		t.Fatalf("%d %v", code, st)
	}
	if got := stub.last(); got != "" {
		t.Fatalf("the impostor saw %q", got)
	}
}
