//go:build !unix

package watchcache

import "time"

// processCPU is not measured here; benchmarks then omit cpu-ns/delivered.
func processCPU() time.Duration { return 0 }
