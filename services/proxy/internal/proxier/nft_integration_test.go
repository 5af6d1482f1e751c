package proxier

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"syscall"
	"testing"
	"time"

	"sigs.k8s.io/knftables"

	"podline.dev/pkg/testenv"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	"podline.dev/services/proxy/internal/rules"
)

// TestRealNFTablesForwardsClusterIPAndRefusesNoEndpoints programs the
// real nftables of a throwaway "node" network namespace, wired by a veth
// pair to a "pod" namespace with an HTTP server on 10.244.1.2:8080. From
// the node, the Service web's ClusterIP 10.96.0.10:80 reaches the Pod;
// the Service empty (no endpoints) at 10.96.0.11:80 is refused at once.
func TestRealNFTablesForwardsClusterIPAndRefusesNoEndpoints(t *testing.T) {
	needRootNFT(t)
	node, pod := newNetns(t, "node"), newNetns(t, "pod")
	veth := fmt.Sprintf("plp%d", time.Now().UnixNano()%100000)
	sh(t, "ip", "-n", node, "link", "add", veth, "type", "veth", "peer", "name", "eth0", "netns", pod)
	sh(t, "ip", "-n", node, "addr", "add", "10.244.1.1/24", "dev", veth)
	sh(t, "ip", "-n", node, "link", "set", veth, "up")
	// A node has a default route (connect needs one for a ClusterIP before
	// DNAT reroutes); here it goes into a veth pair with both ends in the
	// node namespace, so nothing leaves it.
	sh(t, "ip", "-n", node, "link", "add", "uplink0", "type", "veth", "peer", "name", "uplink1")
	sh(t, "ip", "-n", node, "addr", "add", "192.0.2.1/24", "dev", "uplink0")
	sh(t, "ip", "-n", node, "link", "set", "uplink0", "up")
	sh(t, "ip", "-n", node, "link", "set", "uplink1", "up")
	sh(t, "ip", "-n", node, "route", "add", "default", "via", "192.0.2.254")
	sh(t, "ip", "-n", pod, "addr", "add", "10.244.1.2/24", "dev", "eth0")
	sh(t, "ip", "-n", pod, "link", "set", "eth0", "up")
	sh(t, "ip", "-n", pod, "route", "add", "default", "via", "10.244.1.1")

	var ln net.Listener
	if err := inNetns(pod, func() (err error) {
		ln, err = net.Listen("tcp", "10.244.1.2:8080")
		return err
	}); err != nil {
		t.Fatal(err)
	}
	srv := &http.Server{ReadHeaderTimeout: 5 * time.Second, Handler: http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		_, _ = io.WriteString(w, "pod web from "+r.RemoteAddr)
	})}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { _ = srv.Close() })

	src := NewMemorySource()
	load(src, []*corev1.Service{
		MakeService("default", "web").ClusterIP("10.96.0.10").Port("http", 80, 8080).Obj(),
		MakeService("default", "empty").ClusterIP("10.96.0.11").Port("http", 80, 8080).Obj(),
	}, []*discoveryv1.EndpointSlice{
		MakeSlice("default", "web", "web-1").Port("http", 8080).Ready("10.244.1.2").Obj(),
	})
	ctx := context.Background()
	if err := inNetns(node, func() error {
		nft, err := knftables.New(knftables.IPv4Family, rules.Table, knftables.UseNetlink)
		if err != nil {
			return err
		}
		return newTestProxier(nft, src, testNode).Sync(ctx)
	}); err != nil {
		t.Fatal(err)
	}

	// Dialing from the node namespace: the socket is made on a thread in it.
	dial := func(addr string) (net.Conn, error) {
		var c net.Conn
		err := inNetns(node, func() (err error) {
			c, err = net.DialTimeout("tcp", addr, 5*time.Second)
			return err
		})
		return c, err
	}
	var body string
	testenv.Eventually(t, 10*time.Second, "a request to the ClusterIP reaches the pod", func() error {
		c, err := dial("10.96.0.10:80")
		if err != nil {
			return err
		}
		defer c.Close()
		_ = c.SetDeadline(time.Now().Add(5 * time.Second))
		if _, err := io.WriteString(c, "GET / HTTP/1.0\r\nHost: web\r\n\r\n"); err != nil {
			return err
		}
		b, err := io.ReadAll(c)
		if !strings.Contains(string(b), "pod web from 10.244.1.1:") {
			return fmt.Errorf("response %q (%v)", b, err)
		}
		body = string(b)
		return nil
	})
	t.Logf("response: %q", body)

	start := time.Now()
	c, err := dial("10.96.0.11:80")
	if err == nil {
		c.Close()
		t.Fatal("a Service without endpoints accepted a connection")
	}
	if !errors.Is(err, syscall.ECONNREFUSED) {
		t.Fatalf("a Service without endpoints: %v, want connection refused", err)
	}
	if took := time.Since(start); took > 3*time.Second {
		t.Errorf("refusal took %s, want at once", took)
	}
}
