package endpoints

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func newFixture(t *testing.T) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	ec, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	return f, ec
}

func webPod(name, ip string) *ctltest.PodWrapper {
	return ctltest.MakePod().Name(name).Label("app", "web").Node("n1").IP(ip)
}

func sync(t *testing.T, ec *Controller, key string) {
	t.Helper()
	if err := ec.Sync(context.Background(), key); err != nil {
		t.Fatal(err)
	}
}

func stored(t *testing.T, f *ctltest.Fixture, name string) *corev1.Endpoints {
	t.Helper()
	for _, o := range f.Conn.Objects("endpoints") {
		if e := o.(*corev1.Endpoints); e.GetMetadata().GetName() == name {
			return e
		}
	}
	t.Fatalf("no endpoints %s", name)
	return nil
}

// show prints subsets as "[ready ips | not-ready ips | name:port/protocol ...]".
func show(subsets []*corev1.EndpointSubset) string {
	var out []string
	for _, ss := range subsets {
		var r, nr, p []string
		for _, a := range ss.GetAddresses() {
			r = append(r, a.GetIp())
		}
		for _, a := range ss.GetNotReadyAddresses() {
			nr = append(nr, a.GetIp())
		}
		for _, port := range ss.GetPorts() {
			p = append(p, fmt.Sprintf("%s:%d/%s", port.GetName(), port.GetPort(), port.GetProtocol()))
		}
		out = append(out, fmt.Sprintf("[%s | %s | %s]", strings.Join(r, " "), strings.Join(nr, " "), strings.Join(p, " ")))
	}
	return strings.Join(out, " ")
}

func TestSyncListsReadyAndNotReadyPods(t *testing.T) {
	f, ec := newFixture(t)
	t0 := ctltest.Epoch
	svc := ctltest.MakeService().Obj()
	svc.Metadata.Labels = map[string]string{"tier": "front"}
	f.Add(svc,
		webPod("a", "10.244.1.3").Ready(t0).Obj(),
		webPod("b", "10.244.1.2").Ready(t0).Obj(),
		webPod("c", "10.244.1.4").Phase("Running").Obj(),          // not ready
		webPod("d", "").Obj(),                                     // no IP yet
		webPod("e", "10.244.1.5").Phase("Succeeded").Obj(),        // finished
		webPod("f", "10.244.1.6").Ready(t0).Terminating(t0).Obj(), // going away
		ctltest.MakePod().Name("other").IP("10.244.1.9").Obj(),    // not selected
	)
	sync(t, ec, "default/web")
	f.ExpectWrites("create endpoints default/web")
	ep := stored(t, f, "web")
	if got, want := show(ep.GetSubsets()), "[10.244.1.2 10.244.1.3 | 10.244.1.4 | http:8080/TCP]"; got != want {
		t.Errorf("subsets = %s, want %s", got, want)
	}
	a := ep.GetSubsets()[0].GetAddresses()[0]
	if a.GetNodeName() != "n1" || a.GetTargetRef().GetKind() != "Pod" || a.GetTargetRef().GetName() != "b" || a.GetTargetRef().GetUid() == "" {
		t.Errorf("address = %v", a)
	}
	if l := ep.GetMetadata().GetLabels(); len(l) != 1 || l["tier"] != "front" {
		t.Errorf("labels = %v, want the Service's", l)
	}
	if len(ep.GetMetadata().GetOwnerReferences()) != 0 {
		t.Errorf("ownerReferences = %v, want none (as in Kubernetes)", ep.GetMetadata().GetOwnerReferences())
	}
	// Level-triggered: the same world gives no write.
	f.SyncCache("endpoints")
	f.Conn.ClearActions()
	sync(t, ec, "default/web")
	f.ExpectWrites()
}

func TestSyncUpdatesAsPodsComeAndGo(t *testing.T) {
	f, ec := newFixture(t)
	t0 := ctltest.Epoch
	f.Add(ctltest.MakeService().Obj(), webPod("a", "10.0.0.1").Ready(t0).Obj())
	sync(t, ec, "default/web")
	f.SyncCache("endpoints")
	f.Conn.ClearActions()
	f.Add(webPod("a", "10.0.0.1").Ready(t0).Terminating(t0).Obj(), webPod("b", "10.0.0.2").Ready(t0).Obj())
	sync(t, ec, "default/web")
	f.ExpectWrites("update endpoints default/web")
	if got, want := show(stored(t, f, "web").GetSubsets()), "[10.0.0.2 |  | http:8080/TCP]"; got != want {
		t.Errorf("subsets = %s, want %s", got, want)
	}
}

func TestSyncServiceWithoutPodsHasEmptyEndpoints(t *testing.T) {
	f, ec := newFixture(t)
	f.Add(ctltest.MakeService().Obj())
	sync(t, ec, "default/web")
	f.ExpectWrites("create endpoints default/web")
	if s := stored(t, f, "web").GetSubsets(); len(s) != 0 {
		t.Errorf("subsets = %v, want none", s)
	}
}

func TestPublishNotReadyAddressesListsEveryPodAsReady(t *testing.T) {
	f, ec := newFixture(t)
	t0 := ctltest.Epoch
	svc := ctltest.MakeService().Obj()
	svc.Spec.PublishNotReadyAddresses = true
	f.Add(svc, webPod("a", "10.0.0.1").Obj(), webPod("b", "10.0.0.2").Ready(t0).Terminating(t0).Obj())
	sync(t, ec, "default/web")
	if got, want := show(stored(t, f, "web").GetSubsets()), "[10.0.0.1 10.0.0.2 |  | http:8080/TCP]"; got != want {
		t.Errorf("subsets = %s, want %s", got, want)
	}
}

// A named targetPort resolves per pod, so pods serving different numbers
// land in different subsets, and a pod without the port is left out of
// them; a port every pod serves gets a subset of all of them (Kubernetes
// packs subsets by port, then by identical address sets).
func TestNamedTargetPortSplitsSubsets(t *testing.T) {
	f, ec := newFixture(t)
	t0 := ctltest.Epoch
	svc := ctltest.MakeService().NamedTargetPort("http").Obj()
	svc.Spec.Ports = append(svc.Spec.Ports, &corev1.ServicePort{Name: "metrics", Protocol: "TCP", Port: 9090, TargetPort: &metav1.IntOrString{IntVal: 9090}})
	f.Add(svc,
		webPod("a", "10.0.0.1").Ready(t0).ContainerPort("http", 8080).Obj(),
		webPod("b", "10.0.0.2").Ready(t0).ContainerPort("http", 9376).Obj(),
		webPod("c", "10.0.0.3").Ready(t0).Obj(), // no port named http
	)
	sync(t, ec, "default/web")
	want := "[10.0.0.1 |  | http:8080/TCP] [10.0.0.2 |  | http:9376/TCP] [10.0.0.1 10.0.0.2 10.0.0.3 |  | metrics:9090/TCP]"
	if got := show(stored(t, f, "web").GetSubsets()); got != want {
		t.Errorf("subsets =\n %s\nwant\n %s", got, want)
	}
}

func TestHeadlessServiceWithoutPortsListsBareAddresses(t *testing.T) {
	f, ec := newFixture(t)
	t0 := ctltest.Epoch
	svc := ctltest.MakeService().Obj()
	svc.Spec.ClusterIp, svc.Spec.Ports = "None", nil
	pod := webPod("a", "10.0.0.1").Ready(t0).Obj()
	pod.Spec.Hostname, pod.Spec.Subdomain = "a", "web"
	f.Add(svc, pod)
	sync(t, ec, "default/web")
	ep := stored(t, f, "web")
	if got, want := show(ep.GetSubsets()), "[10.0.0.1 |  | ]"; got != want {
		t.Errorf("subsets = %s, want %s", got, want)
	}
	if h := ep.GetSubsets()[0].GetAddresses()[0].GetHostname(); h != "a" {
		t.Errorf("hostname = %q, want a (the pod names the service as its subdomain)", h)
	}
	if _, ok := ep.GetMetadata().GetLabels()[LabelHeadless]; !ok {
		t.Errorf("labels = %v, want %s", ep.GetMetadata().GetLabels(), LabelHeadless)
	}
}

func TestServicesWithoutSelectorAreLeftAlone(t *testing.T) {
	f, ec := newFixture(t)
	svc := ctltest.MakeService().Selector(nil).Obj()
	byHand := &corev1.Endpoints{Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Subsets: []*corev1.EndpointSubset{{Addresses: []*corev1.EndpointAddress{{Ip: "192.168.1.10"}}}}}
	f.Add(svc, byHand)
	sync(t, ec, "default/web")
	f.ExpectWrites()
}

func TestDeletedServiceTakesItsEndpoints(t *testing.T) {
	f, ec := newFixture(t)
	f.Add(ctltest.MakeService().Obj())
	sync(t, ec, "default/web")
	f.SyncCache("endpoints")
	f.Conn.Remove("services", "default", "web")
	f.SyncCache("services")
	f.Conn.ClearActions()
	sync(t, ec, "default/web")
	f.ExpectWrites("delete endpoints default/web")
	if _, err := ec.endpoints.Get(context.Background(), "default", "web"); !apierrors.IsNotFound(err) {
		t.Errorf("get after delete: %v", err)
	}
	// Nothing left to delete is no error.
	sync(t, ec, "default/web")
}

func TestPodEventsEnqueueMatchingServices(t *testing.T) {
	f, ec := newFixture(t)
	f.Add(ctltest.MakeService().Obj(), ctltest.MakeService().Name("other").Selector(map[string]string{"app": "other"}).Obj(),
		ctltest.MakeService().Name("by-hand").Selector(nil).Obj())
	ec.podChanged(webPod("a", "").Obj(), webPod("a", "10.0.0.1").Label("app", "other").Obj())
	if n := ec.queue.Len(); n != 2 {
		t.Errorf("%d services queued, want both selecting ones (old and new labels)", n)
	}
}

// Ports served by the same addresses share one subset.
func TestPortsWithTheSameAddressesShareASubset(t *testing.T) {
	f, ec := newFixture(t)
	t0 := ctltest.Epoch
	svc := ctltest.MakeService().Obj()
	svc.Spec.Ports = append(svc.Spec.Ports, &corev1.ServicePort{Name: "dns", Protocol: "UDP", Port: 53, TargetPort: &metav1.IntOrString{IntVal: 5353}})
	f.Add(svc, webPod("a", "10.0.0.1").Ready(t0).Obj(), webPod("b", "10.0.0.2").Obj())
	sync(t, ec, "default/web")
	if got, want := show(stored(t, f, "web").GetSubsets()), "[10.0.0.1 | 10.0.0.2 | dns:5353/UDP http:8080/TCP]"; got != want {
		t.Errorf("subsets = %s, want %s", got, want)
	}
}

// At start every Endpoints is looked at once: one whose Service is gone is
// deleted; a leader-election record is not even queued.
func TestLeftoverEndpointsAreDeletedAtStart(t *testing.T) {
	f, ec := newFixture(t)
	ep := func(name string, annotations map[string]string) *corev1.Endpoints {
		return &corev1.Endpoints{Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default", Annotations: annotations}}
	}
	f.Add(ctltest.MakeService().Obj(), ep("web", nil), ep("gone", nil),
		ep("lock", map[string]string{annotationLeader: `{"holderIdentity":"x"}`}))
	ec.queueLeftovers()
	if n := ec.queue.Len(); n != 2 {
		t.Fatalf("%d keys queued, want web and gone", n)
	}
	for range 2 {
		key, _ := ec.queue.Get()
		sync(t, ec, key)
		ec.queue.Done(key)
	}
	f.ExpectWrites("delete endpoints default/gone") // web is already what its Service wants
}

func TestOverCapacityIsTruncatedAndMarked(t *testing.T) {
	f, ec := newFixture(t)
	t0 := ctltest.Epoch
	objs := []object.Object{ctltest.MakeService().Obj()}
	for i := range MaxCapacity + 5 {
		p := webPod(fmt.Sprintf("p%04d", i), fmt.Sprintf("10.0.%d.%d", i/250, i%250+1))
		if i%2 == 0 {
			p = p.Ready(t0)
		}
		objs = append(objs, p.Obj())
	}
	f.Add(objs...)
	sync(t, ec, "default/web")
	ep := stored(t, f, "web")
	ready, notReady := len(ep.GetSubsets()[0].GetAddresses()), len(ep.GetSubsets()[0].GetNotReadyAddresses())
	if ready != 503 || notReady != MaxCapacity-503 {
		t.Errorf("%d ready and %d not ready addresses, want every ready one (503) and the rest up to %d", ready, notReady, MaxCapacity)
	}
	if ep.GetMetadata().GetAnnotations()[AnnotationOverCapacity] != "truncated" {
		t.Errorf("annotations = %v", ep.GetMetadata().GetAnnotations())
	}
	// Back under capacity: the mark goes.
	f.SyncCache("endpoints")
	f.Conn.Remove("pods", "default", "p0000")
	f.Conn.Remove("pods", "default", "p0001")
	for i := 2; i < 10; i++ {
		f.Conn.Remove("pods", "default", fmt.Sprintf("p%04d", i))
	}
	f.SyncCache("pods")
	sync(t, ec, "default/web")
	if a := stored(t, f, "web").GetMetadata().GetAnnotations(); a[AnnotationOverCapacity] != "" {
		t.Errorf("annotations under capacity = %v", a)
	}
}

func TestTruncateKeepsReadyFirstAndSharesByProportion(t *testing.T) {
	addrs := func(n int) []*corev1.EndpointAddress {
		out := make([]*corev1.EndpointAddress, n)
		for i := range out {
			out[i] = &corev1.EndpointAddress{Ip: fmt.Sprintf("10.0.%d.%d", i/250, i%250+1)}
		}
		return out
	}
	count := func(ss []*corev1.EndpointSubset) string {
		var out []string
		for _, s := range ss {
			out = append(out, fmt.Sprintf("%d/%d", len(s.Addresses), len(s.NotReadyAddresses)))
		}
		return strings.Join(out, " ")
	}
	for _, tc := range []struct {
		name      string
		subsets   []*corev1.EndpointSubset
		truncated bool
		want      string
	}{
		{"under capacity", []*corev1.EndpointSubset{{Addresses: addrs(600), NotReadyAddresses: addrs(400)}}, false, "600/400"},
		{"not-ready cut", []*corev1.EndpointSubset{{Addresses: addrs(600), NotReadyAddresses: addrs(300)}, {NotReadyAddresses: addrs(300)}}, true, "600/200 0/200"},
		{"ready cut, not-ready dropped", []*corev1.EndpointSubset{{Addresses: addrs(900), NotReadyAddresses: addrs(10)}, {Addresses: addrs(300)}}, true, "750/0 250/0"},
	} {
		if got := truncate(tc.subsets); got != tc.truncated || count(tc.subsets) != tc.want {
			t.Errorf("%s: truncate = %v, %s; want %v, %s", tc.name, got, count(tc.subsets), tc.truncated, tc.want)
		}
	}
}
