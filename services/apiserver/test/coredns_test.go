package test

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"podline.dev/pkg/testenv"
	"podline.dev/services/apiserver/apiservertest"
)

// corednsStart bounds CoreDNS' start-up (its kubernetes plugin's first list
// and watch) on a busy 2-core machine.
const corednsStart = 60 * time.Second

// corednsBinary is $COREDNS or the repository's bin/coredns; without either
// the test is skipped.
func corednsBinary(t *testing.T, root string) string {
	t.Helper()
	bin := os.Getenv("COREDNS")
	if bin == "" {
		bin = filepath.Join(root, "bin", "coredns")
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/coredns is not built (make coredns), and $COREDNS is not set")
	}
	return bin
}

// manifestCorefile is the Corefile of the coredns ConfigMap in
// tools/coredns/coredns.yaml: the lines under "Corefile: |", de-indented.
func manifestCorefile(t *testing.T, root string) string {
	t.Helper()
	raw, err := os.ReadFile(filepath.Join(root, "tools", "coredns", "coredns.yaml"))
	if err != nil {
		t.Fatal(err)
	}
	_, rest, ok := strings.Cut(string(raw), "  Corefile: |\n")
	if !ok {
		t.Fatal("coredns.yaml has no Corefile")
	}
	var b strings.Builder
	for line := range strings.Lines(rest) {
		if strings.TrimSpace(line) != "" && !strings.HasPrefix(line, "    ") {
			break
		}
		b.WriteString(strings.TrimPrefix(line, "    "))
	}
	return b.String()
}

// corednsFor rewrites the cluster's Corefile for a test on loopback: its
// ports become dns, health, ready and metrics on 127.0.0.1, the
// kubernetes plugin reads kubeconfig instead of the in-cluster account, and
// answers are not cached.
// Every rewrite must apply, so a changed manifest fails here, not silently.
func corednsFor(t *testing.T, corefile, kubeconfig string, dns, health, ready, metrics int) string {
	t.Helper()
	for _, r := range []struct{ old, new string }{
		{":53 {", fmt.Sprintf(":%d {\n    bind 127.0.0.1", dns)},
		{":53 ", fmt.Sprintf(":%d ", dns)},
		{"health {", fmt.Sprintf("health 127.0.0.1:%d {", health)},
		{"ready\n", fmt.Sprintf("ready 127.0.0.1:%d\n", ready)},
		{"prometheus :9153", fmt.Sprintf("prometheus 127.0.0.1:%d", metrics)},
		{"ip6.arpa {\n", "ip6.arpa {\n        kubeconfig " + kubeconfig + "\n"},
		// The cache keeps an answer, NXDOMAIN included, up to 30 s: in the
		// cluster a new Service can take that long to resolve after a miss.
		// The test checks the plugin's watch, so it answers uncached.
		{"    cache 30\n", ""},
	} {
		if !strings.Contains(corefile, r.old) {
			t.Fatalf("the manifest's Corefile has no %q:\n%s", r.old, corefile)
		}
		corefile = strings.ReplaceAll(corefile, r.old, r.new)
	}
	return corefile
}

// syncBuffer collects a process' output for failure messages.
type syncBuffer struct {
	mu sync.Mutex
	b  strings.Builder
}

func (s *syncBuffer) Write(p []byte) (int, error) {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.Write(p)
}

func (s *syncBuffer) String() string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.b.String()
}

// The cluster's own Corefile (tools/coredns/coredns.yaml) in the real
// CoreDNS, its kubernetes plugin an ordinary client-go client of podline's
// REST API: a ClusterIP Service resolves to its ClusterIP (A, SRV and PTR),
// a headless one to its ready endpoints, Services created and deleted while
// it runs come and go through its watch, and a name outside the cluster's
// zones is refused (nothing is forwarded).
func TestCoreDNSServesServicesOfThePodlineAPI(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	bin := corednsBinary(t, root)
	s, c := startCoreDNSAPI(t)

	c.create("/api/v1/namespaces/default/services", `{"apiVersion":"v1","kind":"Service",
		"metadata":{"name":"web","namespace":"default"},
		"spec":{"clusterIP":"10.96.0.50","selector":{"app":"web"},
			"ports":[{"name":"http","port":80,"protocol":"TCP","targetPort":8080}]}}`)
	c.create("/api/v1/namespaces/default/services", `{"apiVersion":"v1","kind":"Service",
		"metadata":{"name":"db","namespace":"default"},
		"spec":{"clusterIP":"None","selector":{"app":"db"},"ports":[{"port":5432,"protocol":"TCP"}]}}`)
	c.create("/apis/discovery.k8s.io/v1/namespaces/default/endpointslices", `{"apiVersion":"discovery.k8s.io/v1","kind":"EndpointSlice",
		"metadata":{"name":"db-1","namespace":"default","labels":{"kubernetes.io/service-name":"db"}},
		"addressType":"IPv4","ports":[{"port":5432,"protocol":"TCP"}],
		"endpoints":[{"addresses":["10.244.1.5"],"conditions":{"ready":true}},
			{"addresses":["10.244.2.6"],"conditions":{"ready":true}},
			{"addresses":["10.244.2.7"],"conditions":{"ready":false}}]}`)

	dir := t.TempDir()
	kubeconfig := filepath.Join(dir, "kubeconfig")
	kcfg := "apiVersion: v1\nkind: Config\nclusters:\n- name: c\n  cluster: {server: \"" + s.URL + "\"}\n" +
		"contexts:\n- name: c\n  context: {cluster: c, user: u}\ncurrent-context: c\nusers:\n- name: u\n  user: {}\n"
	if err := os.WriteFile(kubeconfig, []byte(kcfg), 0o600); err != nil {
		t.Fatal(err)
	}
	ports := map[string]int{}
	for _, p := range []string{"dns", "health", "ready", "metrics"} {
		ports[p] = freeDNSPort(t)
	}
	conf := filepath.Join(dir, "Corefile")
	corefile := corednsFor(t, manifestCorefile(t, root), kubeconfig, ports["dns"], ports["health"], ports["ready"], ports["metrics"])
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	out := &syncBuffer{}
	cmd := exec.Command(bin, "-conf", conf)
	cmd.Stdout, cmd.Stderr = out, out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("Corefile:\n%s\ncoredns output:\n%s", corefile, out)
		}
	})
	httpc := &http.Client{Timeout: 2 * time.Second}
	get := func(port int, path string) error {
		resp, err := httpc.Get("http://127.0.0.1:" + strconv.Itoa(port) + path)
		if err != nil {
			return err
		}
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			return fmt.Errorf("%s: %s", path, resp.Status)
		}
		return nil
	}
	testenv.Eventually(t, corednsStart, "coredns /ready (its kubernetes plugin synced)", func() error {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("coredns exited: %v", err)
		default:
		}
		return get(ports["ready"], "/ready")
	})
	for _, path := range []struct {
		port int
		path string
	}{{ports["health"], "/health"}, {ports["metrics"], "/metrics"}} {
		if err := get(path.port, path.path); err != nil {
			t.Fatal(err)
		}
	}

	dnsAddr := net.JoinHostPort("127.0.0.1", strconv.Itoa(ports["dns"]))
	r := &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, network, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, network, dnsAddr)
	}}
	// Each lookup gets its own deadline: the Eventually loops below outlast
	// any one context.
	lookupCtx := func() context.Context {
		ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		t.Cleanup(cancel)
		return ctx
	}
	lookup := func(name string) ([]string, error) {
		addrs, err := r.LookupHost(lookupCtx(), name)
		slices.Sort(addrs)
		return addrs, err
	}
	// /ready turns 200 once the plugin's informers synced, which can be
	// before the DNS listener is open: wait for the first answer.
	testenv.Eventually(t, corednsStart, "coredns answers on its DNS port", func() error {
		_, err := lookup("web.default.svc.cluster.local.")
		return err
	})
	for _, tt := range []struct {
		name string
		want []string
	}{
		{"web.default.svc.cluster.local.", []string{"10.96.0.50"}},
		{"db.default.svc.cluster.local.", []string{"10.244.1.5", "10.244.2.6"}},
	} {
		if got, err := lookup(tt.name); err != nil || !slices.Equal(got, tt.want) {
			t.Errorf("%s: %v %v, want %v", tt.name, got, err, tt.want)
		}
	}
	if _, srvs, err := r.LookupSRV(lookupCtx(), "http", "tcp", "web.default.svc.cluster.local."); err != nil || len(srvs) != 1 ||
		srvs[0].Port != 80 || srvs[0].Target != "web.default.svc.cluster.local." {
		t.Errorf("SRV _http._tcp.web: %v %v", srvs, err)
	}
	if names, err := r.LookupAddr(lookupCtx(), "10.96.0.50"); err != nil || !slices.Equal(names, []string{"web.default.svc.cluster.local."}) {
		t.Errorf("PTR of 10.96.0.50: %v %v", names, err)
	}
	var dnsErr *net.DNSError
	if _, err := lookup("nope.default.svc.cluster.local."); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
		t.Errorf("a Service that does not exist: %v, want not found", err)
	}
	if addrs, err := lookup("example.com."); err == nil || (errors.As(err, &dnsErr) && dnsErr.IsNotFound) {
		t.Errorf("a name outside the cluster: %v %v, want a refusal, not an answer or NXDOMAIN", addrs, err)
	}

	c.create("/api/v1/namespaces/default/services", `{"apiVersion":"v1","kind":"Service",
		"metadata":{"name":"late","namespace":"default"},
		"spec":{"clusterIP":"10.96.0.51","ports":[{"port":80,"protocol":"TCP"}]}}`)
	testenv.Eventually(t, 30*time.Second, "a Service created while coredns runs", func() error {
		got, err := lookup("late.default.svc.cluster.local.")
		if err != nil || !slices.Equal(got, []string{"10.96.0.51"}) {
			return fmt.Errorf("%v %v", got, err)
		}
		return nil
	})
	c.delete("/api/v1/namespaces/default/services/late")
	testenv.Eventually(t, 30*time.Second, "a Service deleted while coredns runs", func() error {
		if got, err := lookup("late.default.svc.cluster.local."); !errors.As(err, &dnsErr) || !dnsErr.IsNotFound {
			return fmt.Errorf("still %v %v", got, err)
		}
		return nil
	})
}

// startCoreDNSAPI is a test apiserver and a REST client of it.
func startCoreDNSAPI(t *testing.T) (*apiservertest.Server, *restClient) {
	t.Helper()
	c, s := newREST(t)
	return s, c
}

func (c *restClient) create(path, body string) {
	c.t.Helper()
	if code, out, _ := c.do("POST", path, "application/json", []byte(body)); code != http.StatusCreated {
		c.t.Fatalf("POST %s: %d %v", path, code, out)
	}
}

func (c *restClient) delete(path string) {
	c.t.Helper()
	if code, out, _ := c.do("DELETE", path, "", nil); code != http.StatusOK && code != http.StatusAccepted {
		c.t.Fatalf("DELETE %s: %d %v", path, code, out)
	}
}

// freeDNSPort is a loopback port free for both TCP and UDP a moment ago.
func freeDNSPort(t *testing.T) int {
	t.Helper()
	for range 20 {
		port := testenv.FreePort(t)
		u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no loopback port free for both TCP and UDP")
	return 0
}

// The cluster's DNS manifest is what the real kubectl applies to podline:
// every object is created, kube-dns gets the fixed ClusterIP 10.96.0.10,
// and the Deployment's Pods are admitted with their priority class.
func TestCoreDNSManifestApplies(t *testing.T) {
	root, err := testenv.RepoRoot()
	if err != nil {
		t.Fatal(err)
	}
	k := newKubectl(t, apiservertest.Start(t))
	out := k.must("apply", "-f", filepath.Join(root, "tools", "coredns", "coredns.yaml"))
	for _, want := range []string{
		"serviceaccount/coredns created",
		"clusterrole.rbac.authorization.k8s.io/system:coredns created",
		"clusterrolebinding.rbac.authorization.k8s.io/system:coredns created",
		"configmap/coredns created",
		"deployment.apps/coredns created",
		"service/kube-dns created",
	} {
		if !strings.Contains(out, want) {
			t.Errorf("kubectl apply: no %q in\n%s", want, out)
		}
	}
	for _, tt := range []struct {
		kind, name, jsonpath, want string
	}{
		{"svc", "kube-dns", "{.spec.clusterIP} {.spec.ports[*].name}", "10.96.0.10 dns dns-tcp metrics"},
		{"deploy", "coredns", "{.spec.template.spec.containers[0].image} {.spec.template.spec.priorityClassName}",
			"registry.podline:5000/coredns:1.15.0 system-cluster-critical"},
		{"clusterrole", "system:coredns", "{.rules[1].resources[0]}", "endpointslices"},
	} {
		if got := k.must("-n", "kube-system", "get", tt.kind, tt.name, "-o", "jsonpath="+tt.jsonpath); got != tt.want {
			t.Errorf("%s/%s %s: %q, want %q", tt.kind, tt.name, tt.jsonpath, got, tt.want)
		}
	}
}
