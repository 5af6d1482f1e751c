package test

import (
	"strings"
	"testing"

	"podline.dev/services/apiserver/apiservertest"
)

const kubectlEndpoints = `apiVersion: v1
kind: Endpoints
metadata:
  name: external-db
subsets:
- addresses:
  - ip: 192.168.10.5
  - ip: 192.168.10.6
  notReadyAddresses:
  - ip: 192.168.10.7
  ports:
  - name: pg
    port: 5432
`

// endpointsWarning is what Kubernetes 1.33+ answers every request about
// core/v1 Endpoints with, and kubectl prints on stderr.
const endpointsWarning = "Warning: v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice\n"

// The real kubectl with core/v1 Endpoints: apply a hand-written one
// (defaulted to TCP), list it by its short name with kubectl's ENDPOINTS
// column, each with the deprecation warning, see Kubernetes' field path for
// a bad IP, and explain it and a pod's containers with the descriptions
// from proto/*/v1/types.proto.
func TestKubectlEndpointsAndExplain(t *testing.T) {
	s := apiservertest.Start(t)
	k := newKubectl(t, s)
	f := k.file("ep.yaml", kubectlEndpoints)
	if out := k.must("apply", "-f", f); out != endpointsWarning+"endpoints/external-db created\n" {
		t.Fatalf("apply printed %q", out)
	}
	get, warned := strings.CutPrefix(k.must("get", "ep"), endpointsWarning)
	if !warned {
		t.Errorf("kubectl get ep printed no deprecation warning:\n%s", get)
	}
	if fields := strings.Fields(strings.Split(get, "\n")[1]); len(fields) != 3 || fields[0] != "external-db" || fields[1] != "192.168.10.5:5432,192.168.10.6:5432" {
		t.Errorf("kubectl get ep:\n%s", get)
	}
	if p := k.must("get", "endpoints", "external-db", "-o", "jsonpath={.subsets[0].ports[0].protocol}"); p != endpointsWarning+"TCP" {
		t.Errorf("protocol = %q, want the TCP default", p)
	}
	bad := k.file("bad.yaml", strings.Replace(kubectlEndpoints, "192.168.10.6", "127.0.0.1", 1))
	out, ok := k.run("apply", "-f", bad)
	if ok || !strings.Contains(out, `subsets[0].addresses[1].ip: Invalid value: "127.0.0.1": may not be in the loopback range (127.0.0.0/8, ::1/128)`) {
		t.Errorf("apply of a loopback address: %v\n%s", ok, out)
	}

	for _, tc := range []struct {
		path string
		want []string
	}{
		{"endpoints", []string{"KIND:", "Endpoints", "Endpoints lists the network addresses behind a Service", "subsets"}},
		{"endpoints.subsets.notReadyAddresses", []string{"Addresses that are not ready yet", "ip", "nodeName", "targetRef"}},
		{"pod.spec.containers", []string{"Container image reference", "Probe of container liveness", "Compute resources the container requests"}},
		{"deployment.spec.strategy.rollingUpdate.maxSurge", []string{"above the desired count during the update"}},
	} {
		ex := k.must("explain", tc.path)
		for _, w := range tc.want {
			if !strings.Contains(strings.Join(strings.Fields(ex), " "), w) {
				t.Errorf("kubectl explain %s lacks %q:\n%s", tc.path, w, ex)
			}
		}
	}
}
