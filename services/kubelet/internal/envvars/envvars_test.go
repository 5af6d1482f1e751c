package envvars

import (
	"reflect"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

func svc(ns, name, ip string, ports ...*corev1.ServicePort) *corev1.Service {
	return &corev1.Service{
		Metadata: &metav1.ObjectMeta{Namespace: ns, Name: name},
		Spec:     &corev1.ServiceSpec{ClusterIp: ip, Ports: ports},
	}
}

func port(name string, n int32, proto string) *corev1.ServicePort {
	return &corev1.ServicePort{Name: name, Port: n, Protocol: proto}
}

func TestFromServicesNamesEveryPortAsTheKubeletDoes(t *testing.T) {
	got := FromServices([]*corev1.Service{
		svc("default", "my-web", "10.96.0.20", port("http", 80, "TCP"), port("dns", 53, "UDP")),
	})
	want := []Var{
		{"MY_WEB_SERVICE_HOST", "10.96.0.20"},
		{"MY_WEB_SERVICE_PORT", "80"},
		{"MY_WEB_SERVICE_PORT_HTTP", "80"},
		{"MY_WEB_SERVICE_PORT_DNS", "53"},
		{"MY_WEB_PORT", "tcp://10.96.0.20:80"},
		{"MY_WEB_PORT_80_TCP", "tcp://10.96.0.20:80"},
		{"MY_WEB_PORT_80_TCP_PROTO", "tcp"},
		{"MY_WEB_PORT_80_TCP_PORT", "80"},
		{"MY_WEB_PORT_80_TCP_ADDR", "10.96.0.20"},
		{"MY_WEB_PORT_53_UDP", "udp://10.96.0.20:53"},
		{"MY_WEB_PORT_53_UDP_PROTO", "udp"},
		{"MY_WEB_PORT_53_UDP_PORT", "53"},
		{"MY_WEB_PORT_53_UDP_ADDR", "10.96.0.20"},
	}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("got %v\nwant %v", got, want)
	}
}

func TestServicesWithoutClusterIPHaveNoVariables(t *testing.T) {
	got := FromServices([]*corev1.Service{
		svc("default", "headless", "None", port("", 80, "")),
		svc("default", "external", "", port("", 80, "")),
	})
	if len(got) != 0 {
		t.Errorf("got %v, want none", got)
	}
}

func TestUnnamedPortDefaultsToTCP(t *testing.T) {
	got := FromServices([]*corev1.Service{svc("default", "a", "10.96.0.5", port("", 8080, ""))})
	if got[2].Value != "tcp://10.96.0.5:8080" || got[3].Name != "A_PORT_8080_TCP" {
		t.Errorf("got %v", got)
	}
}

func TestForPodSeesItsNamespaceAndTheKubernetesService(t *testing.T) {
	all := []*corev1.Service{
		svc("default", "kubernetes", "10.96.0.1", port("https", 443, "TCP")),
		svc("default", "web", "10.96.0.30", port("", 80, "TCP")),
		svc("team", "api", "10.96.0.40", port("", 80, "TCP")),
		svc("other", "db", "10.96.0.50", port("", 5432, "TCP")),
	}
	hosts := func(vars []Var) []string {
		var out []string
		for _, v := range vars {
			if len(v.Name) > 13 && v.Name[len(v.Name)-13:] == "_SERVICE_HOST" {
				out = append(out, v.Name)
			}
		}
		return out
	}
	for _, tc := range []struct {
		name  string
		ns    string
		links bool
		want  []string
	}{
		{"own namespace and kubernetes", "team", true, []string{"API_SERVICE_HOST", "KUBERNETES_SERVICE_HOST"}},
		{"links disabled keeps kubernetes", "team", false, []string{"KUBERNETES_SERVICE_HOST"}},
		{"default namespace", "default", true, []string{"KUBERNETES_SERVICE_HOST", "WEB_SERVICE_HOST"}},
		{"default namespace without links", "default", false, []string{"KUBERNETES_SERVICE_HOST"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if got := hosts(ForPod(tc.ns, tc.links, all)); !reflect.DeepEqual(got, tc.want) {
				t.Errorf("got %v, want %v", got, tc.want)
			}
		})
	}
}

func TestForPodOwnNamespaceShadowsKubernetes(t *testing.T) {
	got := ForPod("team", true, []*corev1.Service{
		svc("default", "kubernetes", "10.96.0.1", port("", 443, "TCP")),
		svc("team", "kubernetes", "10.96.0.99", port("", 443, "TCP")),
	})
	if got[0].Value != "10.96.0.99" {
		t.Errorf("KUBERNETES_SERVICE_HOST = %s, want the pod's namespace's 10.96.0.99", got[0].Value)
	}
}
