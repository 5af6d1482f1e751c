package printers

import (
	"encoding/json"
	"fmt"
	"testing"

	corev1 "podline.dev/proto/core/v1"
)

// BenchmarkConvertPodList prints a list of 1,000 running pods as a Table
// with PartialObjectMetadata rows (kubectl get pods) and encodes it.
func BenchmarkConvertPodList(b *testing.B) {
	list := &corev1.PodList{}
	for i := range 1000 {
		list.Items = append(list.Items, MakePod(fmt.Sprintf("web-%04d", i)).Phase("Running").Node("node-1").IP("10.244.1.2").
			Container("web", running(true)).Obj())
	}
	b.ReportAllocs()
	var size int
	for b.Loop() {
		t, err := Convert(list, Options{Include: IncludeMetadata, Now: now})
		if err != nil {
			b.Fatal(err)
		}
		out, err := json.Marshal(t)
		if err != nil {
			b.Fatal(err)
		}
		size = len(out)
	}
	b.ReportMetric(float64(b.Elapsed().Microseconds())/float64(b.N)/1000, "µs/pod")
	b.ReportMetric(float64(size)/1000, "bytes/pod")
}
