package test

import (
	"io"
	"net"
	"net/http"
	"net/http/httptest"
	"strconv"
	"strings"
	"sync"
	"testing"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// kubeletStub stands in for a kubelet's /containerLogs and /exec server
// (the kubelet's own tests cover that server; here the apiserver's side
// of the relay is under test) and records what reached it.
type kubeletStub struct {
	mu   sync.Mutex
	reqs []string
}

func (k *kubeletStub) ServeHTTP(w http.ResponseWriter, r *http.Request) {
	k.mu.Lock()
	k.reqs = append(k.reqs, r.Method+" "+r.URL.RequestURI()+" auth="+r.Header.Get("Authorization"))
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

// pods/log and pods/exec reach the kubelet of the Pod's node, at the
// node's InternalIP and kubelet port, with the client's query and without
// its credentials.
func TestPodLogAndExecReachTheKubelet(t *testing.T) {
	s, pods := startServer(t)
	ctx := ctxFor(t)
	stub := &kubeletStub{}
	kubelet := httptest.NewServer(stub)
	t.Cleanup(kubelet.Close)
	host, portStr, _ := net.SplitHostPort(strings.TrimPrefix(kubelet.URL, "http://"))
	port, _ := strconv.Atoi(portStr)

	nodes := client.Nodes(s.Conn)
	n, err := nodes.Create(ctx, &corev1.Node{Metadata: &metav1.ObjectMeta{Name: "n1"}})
	if err != nil {
		t.Fatal(err)
	}
	n.Status = &corev1.NodeStatus{
		Addresses:       []*corev1.NodeAddress{{Type: "Hostname", Address: "n1"}, {Type: "InternalIP", Address: host}},
		DaemonEndpoints: &corev1.NodeDaemonEndpoints{KubeletEndpoint: &corev1.DaemonEndpoint{Port: int32(port)}},
	}
	if _, err := nodes.UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
	p := pod("p", nil)
	p.Spec.NodeName = "n1"
	if _, err := pods.Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	two := pod("two", nil)
	two.Spec.NodeName = "n1"
	two.Spec.Containers = append(two.Spec.Containers, &corev1.Container{Name: "side", Image: "x"})
	if _, err := pods.Create(ctx, two); err != nil {
		t.Fatal(err)
	}
	unbound := pod("unbound", nil)
	if _, err := pods.Create(ctx, unbound); err != nil {
		t.Fatal(err)
	}

	get := func(method, path string) (int, string) {
		t.Helper()
		req, _ := http.NewRequest(method, s.URL+path, nil)
		req.Header.Set("Authorization", "Bearer secret")
		resp, err := http.DefaultClient.Do(req)
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
	if got, want := stub.last(), "GET /containerLogs/default/p/web?tailLines=5&follow=true auth="; got != want {
		t.Errorf("kubelet saw %q, want %q", got, want)
	}
	code, body = get("POST", "/api/v1/namespaces/default/pods/two/exec?container=side&command=hostname&stdout=true")
	if code != 200 || !strings.Contains(body, "/exec/default/two/side") {
		t.Fatalf("exec: %d %q", code, body)
	}
	if got, want := stub.last(), "POST /exec/default/two/side?container=side&command=hostname&stdout=true auth="; got != want {
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
