//go:build e2e

package e2e

import (
	"fmt"
	"sort"
	"testing"
	"time"
)

// BenchmarkBirth measures apply → all 3 Pods Running and Ready, with the
// image already on the nodes (the first run pulls it and is left out of the
// figures). make bench-birth runs it 10 times.
func BenchmarkBirth(b *testing.B) {
	birth(b, "bench-warm", 3)
	deleteDeployment(b, "bench-warm")
	var took []time.Duration
	b.ResetTimer()
	for i := 0; i < b.N; i++ {
		name := fmt.Sprintf("bench-%d", i)
		_, _, d := birth(b, name, 3)
		took = append(took, d)
		b.StopTimer()
		deleteDeployment(b, name)
		b.StartTimer()
	}
	sort.Slice(took, func(i, j int) bool { return took[i] < took[j] })
	p50 := took[len(took)/2]
	b.ReportMetric(float64(p50.Milliseconds()), "p50-ms")
	b.ReportMetric(float64(took[len(took)-1].Milliseconds()), "max-ms")
	b.ReportMetric(0, "ns/op")
	b.Logf("birth (3 replicas, apply -> all Running+Ready) over %d runs: p50 %v, min %v, max %v",
		len(took), p50, took[0], took[len(took)-1])
}
