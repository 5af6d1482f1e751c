package k8sproto

import "testing"

// BenchmarkToJSONDeployment reads a Deployment like kubectl create
// deployment's, with three containers carrying ports, resources and probes.
func BenchmarkToJSONDeployment(b *testing.B) {
	var containers [][]byte
	for _, name := range []string{"web", "sidecar", "metrics"} {
		containers = append(containers, sub(2, str(1, name), str(2, "registry.podline:5000/demo/"+name+":1.0"),
			sub(6, str(1, "http"), varint(3, 8080), str(4, "TCP")),
			sub(8, qty(1, "cpu", "500m"), qty(1, "memory", "128Mi"), qty(2, "cpu", "100m")),
			sub(10, sub(1, sub(2, str(1, "/healthz"), intVal(2, 8080))), varint(2, 3), varint(4, 10)),
			str(13, "/dev/termination-log"), str(14, "IfNotPresent")))
	}
	in := body("apps/v1", "Deployment",
		meta("web", "default", entry(11, "app", "web")),
		sub(2, varint(1, 2), sub(2, entry(1, "app", "web")),
			sub(3, meta("", "", entry(11, "app", "web")), sub(2, cat(containers...), str(3, "Always")))),
		sub(3))
	b.SetBytes(int64(len(in)))
	b.ReportAllocs()
	for b.Loop() {
		if _, err := ToJSON(in); err != nil {
			b.Fatal(err)
		}
	}
}
