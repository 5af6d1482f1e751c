package rules

import (
	"slices"
	"testing"
)

func TestUsableEndpointsAreReadyOnesOrElseServingTerminatingOnes(t *testing.T) {
	ready := func(ip string) Endpoint { return Endpoint{IP: ip, Port: 80, Ready: true, Serving: true} }
	draining := func(ip string) Endpoint { return Endpoint{IP: ip, Port: 80, Serving: true, Terminating: true} }
	stopping := func(ip string) Endpoint { return Endpoint{IP: ip, Port: 80, Terminating: true} }
	notReady := func(ip string) Endpoint { return Endpoint{IP: ip, Port: 80} }
	tests := []struct {
		name string
		in   []Endpoint
		want []string
	}{
		{"ready only", []Endpoint{ready("a"), notReady("b"), ready("c")}, []string{"a", "c"}},
		{"ready wins over terminating", []Endpoint{draining("a"), ready("b")}, []string{"b"}},
		{"terminating serving when none ready", []Endpoint{draining("a"), stopping("b"), notReady("c")}, []string{"a"}},
		{"none", []Endpoint{notReady("a"), stopping("b")}, nil},
		{"duplicates once", []Endpoint{ready("a"), ready("a")}, []string{"a"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			var got []string
			for _, ep := range UsableEndpoints(tt.in) {
				got = append(got, ep.IP)
			}
			if !slices.Equal(got, tt.want) {
				t.Errorf("got %v, want %v", got, tt.want)
			}
		})
	}
}

func TestBuildRefusesNonIPv4(t *testing.T) {
	if _, err := Build(NodeInfo{ClusterCIDR: "fd00::/64"}, nil); err == nil {
		t.Error("an IPv6 cluster CIDR was accepted")
	}
	svc := &Service{Namespace: "a", Name: "b", ClusterIP: "10.96.0.1",
		Ports: []Port{{Protocol: "tcp", Port: 80, Endpoints: []Endpoint{{IP: "fd00::1", Port: 80, Ready: true}}}}}
	if _, err := BuildService(NodeInfo{}, svc); err == nil {
		t.Error("an IPv6 endpoint was accepted")
	}
}
