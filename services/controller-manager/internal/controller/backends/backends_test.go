package backends

import (
	"fmt"
	"testing"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func TestManagedServicesHaveASelectorAndAreNoExternalName(t *testing.T) {
	ext := ctltest.MakeService().Obj()
	ext.Spec.Type = "ExternalName"
	for _, tc := range []struct {
		svc  *corev1.Service
		want bool
	}{
		{ctltest.MakeService().Obj(), true},
		{ctltest.MakeService().Selector(nil).Obj(), false},
		{ext, false},
	} {
		if got := Managed(tc.svc); got != tc.want {
			t.Errorf("Managed(selector %v, type %q) = %v", tc.svc.Spec.Selector, tc.svc.Spec.Type, got)
		}
	}
}

func TestIncludeAndStateOf(t *testing.T) {
	t0 := ctltest.Epoch
	svc := ctltest.MakeService().Obj()
	notReady := ctltest.MakeService().Obj()
	notReady.Spec.PublishNotReadyAddresses = true
	for _, tc := range []struct {
		name     string
		pod      *corev1.Pod
		svc      *corev1.Service
		included bool
		state    State
	}{
		{"ready", ctltest.MakePod().IP("10.0.0.1").Ready(t0).Obj(), svc, true, State{Serving: true, Ready: true}},
		{"not ready", ctltest.MakePod().IP("10.0.0.1").Phase("Running").Obj(), svc, true, State{}},
		{"terminating", ctltest.MakePod().IP("10.0.0.1").Ready(t0).Terminating(t0).Obj(), svc, true, State{Serving: true, Terminating: true}},
		{"published not ready", ctltest.MakePod().IP("10.0.0.1").Phase("Running").Obj(), notReady, true, State{Ready: true}},
		{"no IP", ctltest.MakePod().Obj(), svc, false, State{}},
		{"failed", ctltest.MakePod().IP("10.0.0.1").Phase("Failed").Obj(), svc, false, State{}},
		{"succeeded", ctltest.MakePod().IP("10.0.0.1").Phase("Succeeded").Obj(), svc, false, State{}},
	} {
		if got := Include(tc.pod); got != tc.included {
			t.Errorf("%s: Include = %v", tc.name, got)
		}
		if tc.included {
			if got := StateOf(tc.svc, tc.pod); got != tc.state {
				t.Errorf("%s: StateOf = %+v, want %+v", tc.name, got, tc.state)
			}
		}
	}
}

func TestPortsResolveTargetPorts(t *testing.T) {
	svc := ctltest.MakeService().Obj()
	svc.Spec.Ports = []*corev1.ServicePort{
		{Name: "web", Port: 80, TargetPort: &metav1.IntOrString{Type: 1, StrVal: "http"}},
		{Name: "dns", Protocol: "UDP", Port: 53, TargetPort: &metav1.IntOrString{Type: 1, StrVal: "dns"}},
		{Name: "admin", Port: 9000, AppProtocol: proto.String("http")},
		{Name: "metrics", Port: 9090, TargetPort: &metav1.IntOrString{IntVal: 19090}},
	}
	pod := ctltest.MakePod().ContainerPort("http", 8080).ContainerPort("dns", 5353).Obj() // dns is TCP: no match for UDP
	var got []string
	for _, p := range Ports(svc, pod) {
		app := "-"
		if p.AppProtocol != nil {
			app = *p.AppProtocol
		}
		got = append(got, fmt.Sprintf("%s %s %d %s", p.Name, p.Protocol, p.Port, app))
	}
	want := "[admin TCP 9000 http metrics TCP 19090 - web TCP 8080 -]"
	if fmt.Sprint(got) != want {
		t.Errorf("Ports = %v, want %s", got, want)
	}
}

func TestHostnameOnlyForTheNamedSubdomain(t *testing.T) {
	svc := ctltest.MakeService().Obj()
	pod := ctltest.MakePod().Obj()
	pod.Spec.Hostname, pod.Spec.Subdomain = "db-0", "web"
	if h := Hostname(svc, pod); h != "db-0" {
		t.Errorf("Hostname = %q, want db-0", h)
	}
	pod.Spec.Subdomain = "other"
	if h := Hostname(svc, pod); h != "" {
		t.Errorf("Hostname for another subdomain = %q", h)
	}
}
