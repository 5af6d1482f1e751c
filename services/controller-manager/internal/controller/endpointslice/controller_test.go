package endpointslice

import (
	"context"
	"slices"
	"testing"

	discoveryv1 "podline.dev/proto/discovery/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func newFixture(t *testing.T, maxPerSlice int) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	if maxPerSlice > 0 {
		f.Context.Options.EndpointSliceMaxEndpoints = maxPerSlice
	}
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

func createdSlices(f *ctltest.Fixture) []*discoveryv1.EndpointSlice {
	var out []*discoveryv1.EndpointSlice
	for _, o := range f.Conn.Objects("endpointslices") {
		out = append(out, o.(*discoveryv1.EndpointSlice))
	}
	return out
}

type ep struct {
	pod, ip            string
	ready, terminating bool
}

func endpointsOf(s *discoveryv1.EndpointSlice) []ep {
	var out []ep
	for _, e := range s.GetEndpoints() {
		out = append(out, ep{e.GetTargetRef().GetName(), e.GetAddresses()[0], e.GetConditions().GetReady(), e.GetConditions().GetTerminating()})
	}
	return out
}

func TestSyncListsPodsOfTheService(t *testing.T) {
	f, ec := newFixture(t, 0)
	svc := ctltest.MakeService().Obj()
	t0 := ctltest.Epoch
	f.Add(svc,
		webPod("a", "10.244.1.2").Ready(t0).Obj(),
		webPod("b", "10.244.1.3").Ready(t0).Obj(),
		webPod("c", "10.244.1.4").Phase("Running").Obj(),       // not ready
		webPod("d", "").Obj(),                                  // no IP yet
		webPod("e", "10.244.1.5").Phase("Succeeded").Obj(),     // finished
		ctltest.MakePod().Name("other").IP("10.244.1.9").Obj(), // not selected
	)
	sync(t, ec, "default/web")
	f.ExpectWrites("create endpointslices default/web-*")
	got := createdSlices(f)
	if len(got) != 1 {
		t.Fatalf("%d slices", len(got))
	}
	s := got[0]
	want := []ep{{"a", "10.244.1.2", true, false}, {"b", "10.244.1.3", true, false}, {"c", "10.244.1.4", false, false}}
	if !slices.Equal(endpointsOf(s), want) {
		t.Errorf("endpoints = %v, want %v", endpointsOf(s), want)
	}
	if s.GetMetadata().GetLabels()[LabelServiceName] != "web" || s.GetMetadata().GetLabels()[LabelManagedBy] != ManagedByValue {
		t.Errorf("labels = %v", s.GetMetadata().GetLabels())
	}
	if refs := s.GetMetadata().GetOwnerReferences(); len(refs) != 1 || refs[0].GetKind() != "Service" || refs[0].GetUid() != svc.Metadata.Uid {
		t.Errorf("ownerReferences = %v", refs)
	}
	if p := s.GetPorts(); len(p) != 1 || p[0].GetName() != "http" || p[0].GetPort() != 8080 || p[0].GetProtocol() != "TCP" {
		t.Errorf("ports = %v", p)
	}
	if s.GetAddressType() != "IPv4" || s.GetEndpoints()[0].GetNodeName() != "n1" {
		t.Errorf("addressType %q nodeName %q", s.GetAddressType(), s.GetEndpoints()[0].GetNodeName())
	}
	// Level-triggered: the same world gives no write.
	f.SyncCache("endpointslices")
	f.Conn.ClearActions()
	sync(t, ec, "default/web")
	f.ExpectWrites()
}

func TestSyncUpdatesSliceAsPodsComeAndGo(t *testing.T) {
	f, ec := newFixture(t, 0)
	t0 := ctltest.Epoch
	f.Add(ctltest.MakeService().Obj(), webPod("a", "10.0.0.1").Ready(t0).Obj())
	sync(t, ec, "default/web")
	f.SyncCache("endpointslices")
	f.Conn.ClearActions()
	// a goes away (terminating), b arrives.
	f.Add(webPod("a", "10.0.0.1").Ready(t0).Terminating(t0).Obj(), webPod("b", "10.0.0.2").Ready(t0).Obj())
	sync(t, ec, "default/web")
	f.ExpectWrites("update endpointslices default/web-bbbbb")
	want := []ep{{"a", "10.0.0.1", false, true}, {"b", "10.0.0.2", true, false}}
	if got := endpointsOf(createdSlices(f)[0]); !slices.Equal(got, want) {
		t.Errorf("endpoints = %v, want %v", got, want)
	}
}

func TestSyncServiceWithoutPodsHasPlaceholder(t *testing.T) {
	f, ec := newFixture(t, 0)
	f.Add(ctltest.MakeService().Obj())
	sync(t, ec, "default/web")
	f.ExpectWrites("create endpointslices default/web-*")
	if s := createdSlices(f)[0]; len(s.GetEndpoints()) != 0 || len(s.GetPorts()) != 0 {
		t.Errorf("placeholder = %v", s)
	}
}

func TestSyncSplitsSlicesAtMaxEndpoints(t *testing.T) {
	f, ec := newFixture(t, 2)
	t0 := ctltest.Epoch
	f.Add(ctltest.MakeService().Obj(), webPod("a", "10.0.0.1").Ready(t0).Obj(), webPod("b", "10.0.0.2").Ready(t0).Obj(), webPod("c", "10.0.0.3").Ready(t0).Obj())
	sync(t, ec, "default/web")
	f.ExpectWrites("create endpointslices default/web-*", "create endpointslices default/web-*")
	// Down to one pod: one slice is updated, the other deleted.
	f.SyncCache("endpointslices")
	f.Conn.Remove("pods", "default", "b")
	f.Conn.Remove("pods", "default", "c")
	f.SyncCache("pods")
	f.Conn.ClearActions()
	sync(t, ec, "default/web")
	f.ExpectWrites("update endpointslices default/web-bbbbb", "delete endpointslices default/web-bbbbc")
}

func TestSyncNamedTargetPort(t *testing.T) {
	f, ec := newFixture(t, 0)
	t0 := ctltest.Epoch
	f.Add(ctltest.MakeService().NamedTargetPort("http").Obj(),
		webPod("a", "10.0.0.1").Ready(t0).ContainerPort("http", 9376).Obj(),
		webPod("b", "10.0.0.2").Ready(t0).Obj(), // no port named http
	)
	sync(t, ec, "default/web")
	got := createdSlices(f)
	if len(got) != 2 {
		t.Fatalf("%d slices, want one per port mapping", len(got))
	}
	var ports []int32
	for _, s := range got {
		for _, p := range s.GetPorts() {
			ports = append(ports, p.GetPort())
		}
	}
	if !slices.Equal(ports, []int32{9376}) {
		t.Errorf("ports = %v, want [9376] on one slice and none on the other", ports)
	}
}

func TestSyncIgnoresServicesWithoutSelector(t *testing.T) {
	f, ec := newFixture(t, 0)
	f.Add(ctltest.MakeService().Selector(nil).Obj())
	sync(t, ec, "default/web")
	f.ExpectWrites()
}

func TestSyncDeletesSlicesOfAReplacedService(t *testing.T) {
	f, ec := newFixture(t, 0)
	old := ctltest.MakeService().Obj()
	f.Add(old)
	sync(t, ec, "default/web")
	f.SyncCache("endpointslices")
	svc := ctltest.MakeService().Obj()
	svc.Metadata.Uid = "new-uid"
	f.Add(svc)
	f.Conn.ClearActions()
	sync(t, ec, "default/web")
	f.ExpectWrites("create endpointslices default/web-*", "delete endpointslices default/web-bbbbb")
}

func TestPodEventsEnqueueMatchingServices(t *testing.T) {
	f, ec := newFixture(t, 0)
	f.Add(ctltest.MakeService().Obj(), ctltest.MakeService().Name("other").Selector(map[string]string{"app": "other"}).Obj())
	old := webPod("a", "").Obj()
	cur := webPod("a", "10.0.0.1").Label("app", "other").Obj()
	ec.podChanged(old, cur)
	if n := ec.queue.Len(); n != 2 {
		t.Errorf("%d services queued, want both (old and new labels)", n)
	}
}
