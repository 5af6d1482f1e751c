package test

import (
	"errors"
	"fmt"
	"net/http"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/client"
	"podline.dev/pkg/testenv"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/apiserver/internal/allocator"
	"podline.dev/services/apiserver/internal/server"
)

// svcBuilder builds Services for the tests.
type svcBuilder struct{ s *corev1.Service }

func makeService(name string) *svcBuilder {
	return &svcBuilder{&corev1.Service{
		Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default"},
		Spec: &corev1.ServiceSpec{Selector: map[string]string{"app": name},
			Ports: []*corev1.ServicePort{{Port: 80}}},
	}}
}

func (b *svcBuilder) typ(t string) *svcBuilder        { b.s.Spec.Type = t; return b }
func (b *svcBuilder) clusterIP(ip string) *svcBuilder { b.s.Spec.ClusterIp = ip; return b }
func (b *svcBuilder) nodePort(n int32) *svcBuilder    { b.s.Spec.Ports[0].NodePort = n; return b }
func (b *svcBuilder) noSelector() *svcBuilder         { b.s.Spec.Selector = nil; return b }
func (b *svcBuilder) obj() *corev1.Service            { return b.s }

func startServices(t *testing.T, opts ...apiservertest.Option) (*apiservertest.Server, *client.Client[*corev1.Service]) {
	t.Helper()
	s := apiservertest.Start(t, opts...)
	return s, client.Services(s.Conn)
}

func statusMessage(t *testing.T, err error) string {
	t.Helper()
	var se *apierrors.StatusError
	if !errors.As(err, &se) {
		t.Fatalf("error %v is not a Status", err)
	}
	return se.Status().GetMessage()
}

func TestServiceCreateAllocatesByType(t *testing.T) {
	ctx := ctxFor(t)
	_, svcs := startServices(t)
	tests := []struct {
		name  string
		svc   *corev1.Service
		check func(*corev1.ServiceSpec) error
	}{
		{"ClusterIP gets an IP of the range", makeService("a").obj(), func(s *corev1.ServiceSpec) error {
			if !strings.HasPrefix(s.ClusterIp, "10.") || !slices.Equal(s.ClusterIps, []string{s.ClusterIp}) {
				return fmt.Errorf("clusterIP %q clusterIPs %v", s.ClusterIp, s.ClusterIps)
			}
			if !slices.Equal(s.IpFamilies, []string{"IPv4"}) || s.GetIpFamilyPolicy() != "SingleStack" {
				return fmt.Errorf("families %v policy %q", s.IpFamilies, s.GetIpFamilyPolicy())
			}
			if s.Ports[0].NodePort != 0 {
				return fmt.Errorf("nodePort %d on a ClusterIP service", s.Ports[0].NodePort)
			}
			return nil
		}},
		{"kube-dns's requested IP", makeService("dns").clusterIP("10.96.0.10").obj(), func(s *corev1.ServiceSpec) error {
			if s.ClusterIp != "10.96.0.10" {
				return fmt.Errorf("clusterIP %q", s.ClusterIp)
			}
			return nil
		}},
		{"NodePort gets a port", makeService("np").typ("NodePort").obj(), func(s *corev1.ServiceSpec) error {
			if n := s.Ports[0].NodePort; n < 30000 || n > 32767 || s.ClusterIp == "" {
				return fmt.Errorf("nodePort %d clusterIP %q", n, s.ClusterIp)
			}
			return nil
		}},
		{"requested NodePort", makeService("np2").typ("NodePort").nodePort(30080).obj(), func(s *corev1.ServiceSpec) error {
			if s.Ports[0].NodePort != 30080 {
				return fmt.Errorf("nodePort %d", s.Ports[0].NodePort)
			}
			return nil
		}},
		{"LoadBalancer gets both", makeService("lb").typ("LoadBalancer").obj(), func(s *corev1.ServiceSpec) error {
			if s.Ports[0].NodePort == 0 || s.ClusterIp == "" {
				return fmt.Errorf("nodePort %d clusterIP %q", s.Ports[0].NodePort, s.ClusterIp)
			}
			return nil
		}},
		{"headless gets none", makeService("hl").clusterIP("None").obj(), func(s *corev1.ServiceSpec) error {
			if s.ClusterIp != "None" || !slices.Equal(s.ClusterIps, []string{"None"}) || s.GetIpFamilyPolicy() != "SingleStack" {
				return fmt.Errorf("clusterIP %q clusterIPs %v policy %q", s.ClusterIp, s.ClusterIps, s.GetIpFamilyPolicy())
			}
			return nil
		}},
		{"headless without selector requires dual stack, as Kubernetes says", makeService("hl2").clusterIP("None").noSelector().obj(), func(s *corev1.ServiceSpec) error {
			if s.GetIpFamilyPolicy() != "RequireDualStack" || !slices.Equal(s.IpFamilies, []string{"IPv4", "IPv6"}) {
				return fmt.Errorf("policy %q families %v", s.GetIpFamilyPolicy(), s.IpFamilies)
			}
			return nil
		}},
		{"ExternalName gets none", func() *corev1.Service {
			s := makeService("ext").typ("ExternalName").obj()
			s.Spec.ExternalName, s.Spec.Ports, s.Spec.Selector = "example.com", nil, nil
			return s
		}(), func(s *corev1.ServiceSpec) error {
			if s.ClusterIp != "" || len(s.ClusterIps) != 0 || len(s.IpFamilies) != 0 {
				return fmt.Errorf("clusterIP %q clusterIPs %v families %v", s.ClusterIp, s.ClusterIps, s.IpFamilies)
			}
			return nil
		}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := svcs.Create(ctx, tt.svc)
			if err != nil {
				t.Fatal(err)
			}
			if err := tt.check(got.Spec); err != nil {
				t.Fatal(err)
			}
			stored, err := svcs.Get(ctx, "default", tt.svc.Metadata.Name)
			if err != nil || !proto.Equal(stored.Spec, got.Spec) {
				t.Fatalf("stored %v, %v; created %v", stored.GetSpec(), err, got.Spec)
			}
		})
	}
}

// Kubernetes' texts for refused requests, over REST.
func TestServiceAllocationErrorsReadLikeKubernetes(t *testing.T) {
	c, s := newREST(t)
	svcs := client.Services(s.Conn)
	ctx := ctxFor(t)
	if _, err := svcs.Create(ctx, makeService("first").clusterIP("10.96.0.20").typ("NodePort").nodePort(30080).obj()); err != nil {
		t.Fatal(err)
	}
	post := func(body string) (int, string) {
		code, obj, _ := c.do("POST", "/api/v1/namespaces/default/services", "application/json", []byte(body))
		msg, _ := obj["message"].(string)
		return code, msg
	}
	tests := []struct {
		name, body, want string
	}{
		{"taken IP", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"b"},"spec":{"clusterIP":"10.96.0.20","ports":[{"port":80}]}}`,
			`Service "b" is invalid: spec.clusterIPs: Invalid value: [10.96.0.20]: failed to allocate IP 10.96.0.20: provided IP is already allocated`},
		{"IP out of range", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"c"},"spec":{"clusterIP":"192.168.1.1","ports":[{"port":80}]}}`,
			`Service "c" is invalid: spec.clusterIPs: Invalid value: [192.168.1.1]: failed to allocate IP 192.168.1.1: the provided IP (192.168.1.1) is not in the valid range. The range of valid IPs is 10.96.0.0/12`},
		{"taken port", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"d"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":30080}]}}`,
			`Service "d" is invalid: spec.ports[0].nodePort: Invalid value: 30080: provided port is already allocated`},
		{"port out of range", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"e"},"spec":{"type":"NodePort","ports":[{"port":80,"nodePort":29999}]}}`,
			`Service "e" is invalid: spec.ports[0].nodePort: Invalid value: 29999: provided port is not in the valid range. The range of valid ports is 30000-32767`},
		{"headless NodePort", `{"apiVersion":"v1","kind":"Service","metadata":{"name":"f"},"spec":{"type":"NodePort","clusterIP":"None","ports":[{"port":80}]}}`,
			`Service "f" is invalid: spec.clusterIPs[0]: Invalid value: "None": may not be set to 'None' for NodePort services`},
	}
	for _, tt := range tests {
		code, msg := post(tt.body)
		if code != http.StatusUnprocessableEntity || msg != tt.want {
			t.Errorf("%s: %d %q\nwant 422 %q", tt.name, code, msg, tt.want)
		}
	}
	// Nothing the refused creates touched is left allocated.
	used, err := s.API.ServiceAllocators().Ports.Used(ctx)
	if err != nil || !slices.Equal(used, []string{"30080"}) {
		t.Fatalf("node ports in use %v (%v), want [30080]", used, err)
	}
}

func TestServiceDeleteAndTypeChangeRelease(t *testing.T) {
	ctx := ctxFor(t)
	s, svcs := startServices(t)
	al := s.API.ServiceAllocators()
	created, err := svcs.Create(ctx, makeService("web").typ("NodePort").nodePort(30090).obj())
	if err != nil {
		t.Fatal(err)
	}
	ip := created.Spec.ClusterIp
	// kubectl patch of type alone: the node port is dropped and freed; the IP stays.
	next := proto.Clone(created).(*corev1.Service)
	next.Spec.Type = "ClusterIP"
	updated, err := svcs.Update(ctx, next)
	if err != nil {
		t.Fatal(err)
	}
	if updated.Spec.Ports[0].NodePort != 0 || updated.Spec.ClusterIp != ip {
		t.Fatalf("after NodePort→ClusterIP: nodePort %d clusterIP %q", updated.Spec.Ports[0].NodePort, updated.Spec.ClusterIp)
	}
	if used, _ := al.Ports.Used(ctx); len(used) != 0 {
		t.Fatalf("node ports still in use: %v", used)
	}
	// A replace without clusterIP keeps it; a changed one is refused.
	replace := makeService("web").obj()
	replace.Metadata.ResourceVersion = updated.Metadata.ResourceVersion
	kept, err := svcs.Update(ctx, replace)
	if err != nil || kept.Spec.ClusterIp != ip {
		t.Fatalf("replace without clusterIP: %v, %v", kept.GetSpec().GetClusterIp(), err)
	}
	change := proto.Clone(kept).(*corev1.Service)
	change.Spec.ClusterIp, change.Spec.ClusterIps = "10.96.0.99", nil
	_, err = svcs.Update(ctx, change)
	if !apierrors.IsInvalid(err) || !strings.Contains(statusMessage(t, err), "spec.clusterIP: Invalid value: \"10.96.0.99\": field is immutable") {
		t.Fatalf("clusterIP change: %v", err)
	}
	if _, err := svcs.Delete(ctx, "default", "web", nil); err != nil {
		t.Fatal(err)
	}
	used, _ := al.IPs.Used(ctx)
	if slices.Contains(used, ip) {
		t.Fatalf("%s still allocated after delete: %v", ip, used)
	}
	// The freed port and IP can be asked for again.
	if _, err := svcs.Create(ctx, makeService("again").clusterIP(ip).typ("NodePort").nodePort(30090).obj()); err != nil {
		t.Fatalf("reusing freed values: %v", err)
	}
}

// A Service whose etcd write fails after allocation (the name exists)
// leaves nothing allocated.
func TestFailedServiceWriteReleases(t *testing.T) {
	ctx := ctxFor(t)
	s, svcs := startServices(t)
	if _, err := svcs.Create(ctx, makeService("dup").obj()); err != nil {
		t.Fatal(err)
	}
	before, _ := s.API.ServiceAllocators().IPs.Used(ctx)
	_, err := svcs.Create(ctx, makeService("dup").clusterIP("10.96.0.50").typ("NodePort").nodePort(30100).obj())
	if !apierrors.IsAlreadyExists(err) {
		t.Fatalf("second create: %v", err)
	}
	after, _ := s.API.ServiceAllocators().IPs.Used(ctx)
	ports, _ := s.API.ServiceAllocators().Ports.Used(ctx)
	if !slices.Equal(before, after) || len(ports) != 0 {
		t.Fatalf("leaked: IPs %v → %v, ports %v", before, after, ports)
	}
}

// Two apiservers on one etcd allocate from the same bitmaps.
func TestConcurrentCreatesOnTwoAPIServersNeverDouble(t *testing.T) {
	ctx := ctxFor(t)
	etcd := apiservertest.StartEtcd(t)
	a := apiservertest.StartOn(t, etcd)
	b := apiservertest.StartOn(t, etcd)
	clients := []*client.Client[*corev1.Service]{client.Services(a.Conn), client.Services(b.Conn)}
	const n = 24
	var mu sync.Mutex
	ips, ports := map[string]string{}, map[int32]string{}
	var wg sync.WaitGroup
	errs := make(chan error, n)
	for i := range n {
		wg.Go(func() {
			name := fmt.Sprintf("s%d", i)
			got, err := clients[i%2].Create(ctx, makeService(name).typ("NodePort").obj())
			if err != nil {
				errs <- err
				return
			}
			mu.Lock()
			defer mu.Unlock()
			if other, dup := ips[got.Spec.ClusterIp]; dup {
				errs <- fmt.Errorf("%s and %s both got %s", name, other, got.Spec.ClusterIp)
			}
			if other, dup := ports[got.Spec.Ports[0].NodePort]; dup {
				errs <- fmt.Errorf("%s and %s both got node port %d", name, other, got.Spec.Ports[0].NodePort)
			}
			ips[got.Spec.ClusterIp], ports[got.Spec.Ports[0].NodePort] = name, name
		})
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
}

// After a crash between allocation and the Service's write, the repair
// frees the leak once it has seen it long enough, and keeps what is used.
func TestRepairFreesLeakedAllocations(t *testing.T) {
	ctx := ctxFor(t)
	s, svcs := startServices(t)
	al := s.API.ServiceAllocators()
	kept, err := svcs.Create(ctx, makeService("kept").typ("NodePort").obj())
	if err != nil {
		t.Fatal(err)
	}
	leakIP, leakPort := "10.96.0.77", "30555"
	if err := al.IPs.Update(ctx, false, func(tx *allocator.Txn) error { return tx.Allocate(leakIP) }); err != nil {
		t.Fatal(err)
	}
	if err := al.Ports.Update(ctx, false, func(tx *allocator.Txn) error { return tx.Allocate(leakPort) }); err != nil {
		t.Fatal(err)
	}
	repair := s.API.ServiceRepair(1)
	if err := repair.RunOnce(ctx); err != nil {
		t.Fatal(err)
	}
	ips, _ := al.IPs.Used(ctx)
	ports, _ := al.Ports.Used(ctx)
	if slices.Contains(ips, leakIP) || slices.Contains(ports, leakPort) {
		t.Fatalf("leaks kept: IPs %v ports %v", ips, ports)
	}
	if !slices.Contains(ips, kept.Spec.ClusterIp) || !slices.Contains(ports, fmt.Sprint(kept.Spec.Ports[0].NodePort)) {
		t.Fatalf("used values freed: IPs %v ports %v (service %s %d)", ips, ports, kept.Spec.ClusterIp, kept.Spec.Ports[0].NodePort)
	}
	if !slices.Contains(ips, "10.96.0.1") {
		t.Fatalf("the kubernetes Service's IP is not allocated: %v", ips)
	}
}

func TestKubernetesServiceIsReconciled(t *testing.T) {
	ctx := ctxFor(t)
	s, svcs := startServices(t, apiservertest.WithServices(func(c *server.ServicesConfig) {
		c.AdvertiseAddress, c.SecurePort = "10.0.0.5", 6443
	}))
	check := func() error {
		svc, err := svcs.Get(ctx, "default", "kubernetes")
		if err != nil {
			return err
		}
		sp := svc.Spec
		if sp.ClusterIp != "10.96.0.1" || len(sp.Ports) != 1 || sp.Ports[0].Name != "https" || sp.Ports[0].Port != 443 ||
			sp.Ports[0].GetTargetPort().GetIntVal() != 6443 || len(sp.Selector) != 0 {
			return fmt.Errorf("service spec %v", sp)
		}
		if l := svc.Metadata.Labels; l["component"] != "apiserver" || l["provider"] != "kubernetes" {
			return fmt.Errorf("labels %v", l)
		}
		ep, err := client.For[*corev1.Endpoints](s.Conn).Get(ctx, "default", "kubernetes")
		if err != nil {
			return err
		}
		if len(ep.Subsets) != 1 || len(ep.Subsets[0].Addresses) != 1 || ep.Subsets[0].Addresses[0].Ip != "10.0.0.5" ||
			ep.Subsets[0].Ports[0].Port != 6443 || ep.Subsets[0].Ports[0].Name != "https" {
			return fmt.Errorf("endpoints %v", ep.Subsets)
		}
		sl, err := client.For[*discoveryv1.EndpointSlice](s.Conn).Get(ctx, "default", "kubernetes")
		if err != nil {
			return err
		}
		if sl.AddressType != "IPv4" || len(sl.Endpoints) != 1 || sl.Endpoints[0].Addresses[0] != "10.0.0.5" ||
			!sl.Endpoints[0].GetConditions().GetReady() || sl.Ports[0].GetPort() != 6443 {
			return fmt.Errorf("slice %v", sl)
		}
		if l := sl.Metadata.Labels; l["kubernetes.io/service-name"] != "kubernetes" || l["endpointslice.kubernetes.io/managed-by"] != "" {
			return fmt.Errorf("slice labels %v", l)
		}
		return nil
	}
	testenv.Eventually(t, 10*time.Second, "kubernetes service", check)
	if _, err := svcs.Delete(ctx, "default", "kubernetes", nil); err != nil {
		t.Fatal(err)
	}
	// The interval is 10 s; the watch brings it back well before.
	testenv.Eventually(t, 5*time.Second, "kubernetes service back after delete", check)
	if _, err := client.For[*discoveryv1.EndpointSlice](s.Conn).Delete(ctx, "default", "kubernetes", nil); err != nil {
		t.Fatal(err)
	}
	testenv.Eventually(t, 5*time.Second, "kubernetes endpointslice back after delete", check)
}

// Each apiserver adds its own address (the lease reconciler).
func TestKubernetesEndpointsListEveryAPIServer(t *testing.T) {
	ctx := ctxFor(t)
	etcd := apiservertest.StartEtcd(t)
	a := apiservertest.StartOn(t, etcd, apiservertest.WithServices(func(c *server.ServicesConfig) {
		c.AdvertiseAddress, c.EndpointInterval = "10.0.0.1", 200*time.Millisecond
	}))
	_ = apiservertest.StartOn(t, etcd, apiservertest.WithServices(func(c *server.ServicesConfig) {
		c.AdvertiseAddress, c.EndpointInterval = "10.0.0.2", 200*time.Millisecond
	}))
	testenv.Eventually(t, 10*time.Second, "both addresses", func() error {
		sl, err := client.For[*discoveryv1.EndpointSlice](a.Conn).Get(ctx, "default", "kubernetes")
		if err != nil {
			return err
		}
		var got []string
		for _, e := range sl.Endpoints {
			got = append(got, e.Addresses...)
		}
		if !slices.Equal(got, []string{"10.0.0.1", "10.0.0.2"}) {
			return fmt.Errorf("addresses %v", got)
		}
		return nil
	})
}
