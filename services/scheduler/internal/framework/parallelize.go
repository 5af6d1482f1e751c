package framework

import (
	"context"
	"math"
	"runtime"
	"sync"
	"sync/atomic"
)

// Parallelizer runs pieces of work on a bounded number of goroutines.
type Parallelizer struct {
	workers int
}

// NewParallelizer returns a Parallelizer with n workers (0: GOMAXPROCS).
func NewParallelizer(n int) Parallelizer {
	if n <= 0 {
		n = runtime.GOMAXPROCS(0)
	}
	return Parallelizer{workers: n}
}

// Until calls work(i) for i in [0, pieces), spread over the workers in
// chunks (Kubernetes' chunk size: about √pieces), until done or ctx ends.
func (p Parallelizer) Until(ctx context.Context, pieces int, work func(i int)) {
	if pieces <= 0 {
		return
	}
	workers := max(p.workers, 1)
	if workers == 1 || pieces == 1 {
		for i := range pieces {
			if ctx.Err() != nil {
				return
			}
			work(i)
		}
		return
	}
	chunk := max(1, min(int(math.Sqrt(float64(pieces))), pieces/workers+1))
	chunks := (pieces + chunk - 1) / chunk
	var next atomic.Int64
	run := func() {
		for {
			c := int(next.Add(1)) - 1
			if c >= chunks {
				return
			}
			for i := c * chunk; i < min((c+1)*chunk, pieces); i++ {
				if ctx.Err() != nil {
					return
				}
				work(i)
			}
		}
	}
	// The caller is one of the workers.
	var wg sync.WaitGroup
	for range min(workers, chunks) - 1 {
		wg.Go(run)
	}
	run()
	wg.Wait()
}
