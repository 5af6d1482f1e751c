package proxier

import (
	"context"
	"fmt"
	"testing"

	"sigs.k8s.io/knftables"

	"podline.dev/services/proxy/internal/rules"
)

// benchSource is nSvc Services with nEp ready endpoints each, always the
// same ones.
func benchSource(nSvc, nEp int) *MemorySource {
	src := NewMemorySource()
	for i := range nSvc {
		name := fmt.Sprintf("svc-%04d", i)
		src.SetService(MakeService("bench", name).ClusterIP(fmt.Sprintf("10.96.%d.%d", i/250, i%250+1)).
			Port("http", 80, "http").Obj())
		sl := MakeSlice("bench", name, name+"-1").Port("http", 8080)
		for j := range nEp {
			n := i*nEp + j
			sl.Ready(fmt.Sprintf("10.244.%d.%d", n/250, n%250+1))
		}
		src.SetSlice(sl.Obj())
	}
	return src
}

// changeOne replaces the last endpoint of svc-0000 by one of two
// addresses, alternating with i.
func changeOne(src *MemorySource, p *Proxier, nEp, i int) {
	sl := MakeSlice("bench", "svc-0000", "svc-0000-1").Port("http", 8080)
	for j := range nEp - 1 {
		sl.Ready(fmt.Sprintf("10.244.%d.%d", j/250, j%250+1))
	}
	sl.Ready(fmt.Sprintf("10.245.0.%d", i%2+1))
	src.SetSlice(sl.Obj())
	p.SliceChanged(sl.Obj())
}

// BenchmarkSync is a full sync of 1,000 Services × 10 endpoints and a
// partial sync of one endpoint change, against knftables' fake and, as
// root, against the real nft in a throwaway network namespace.
// go test -run '^$' -bench Sync -benchtime 5x ./internal/proxier/
func BenchmarkSync(b *testing.B) {
	const nSvc, nEp = 1000, 10
	backends := []struct {
		name string
		nft  func(b *testing.B) knftables.Interface
	}{
		{"fake", func(*testing.B) knftables.Interface { return knftables.NewFake(knftables.IPv4Family, rules.Table) }},
		{"nft", func(b *testing.B) knftables.Interface {
			needRootNFT(b)
			enterNetns(b, newNetns(b, "bench"))
			nft, err := knftables.New(knftables.IPv4Family, rules.Table, knftables.UseNetlink)
			if err != nil {
				b.Fatal(err)
			}
			return nft
		}},
	}
	ctx := context.Background()
	for _, be := range backends {
		b.Run(be.name+"/full", func(b *testing.B) {
			nft := be.nft(b)
			src := benchSource(nSvc, nEp)
			b.ResetTimer()
			for range b.N {
				// A new proxier's first sync is a full one, over the
				// table the previous one left.
				p := newTestProxier(nft, src, testNode)
				if err := p.Sync(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/sync")
		})
		b.Run(be.name+"/endpoint-change", func(b *testing.B) {
			nft := be.nft(b)
			src := benchSource(nSvc, nEp)
			p := newTestProxier(nft, src, testNode)
			if err := p.Sync(ctx); err != nil {
				b.Fatal(err)
			}
			b.ResetTimer()
			for i := range b.N {
				changeOne(src, p, nEp, i)
				if err := p.Sync(ctx); err != nil {
					b.Fatal(err)
				}
			}
			b.ReportMetric(float64(b.Elapsed().Microseconds())/1000/float64(b.N), "ms/sync")
		})
	}
}
