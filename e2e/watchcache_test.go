//go:build e2e

package e2e

import (
	"testing"
	"time"
)

// With one watchcache replica killed, the controllers, schedulers and
// kubelets that list and watch through the replicas keep working: a new
// Deployment's Pods still start.
func TestWatchcacheReplicaKilled(t *testing.T) {
	mustCompose(t, "kill", "watchcache-1")
	t.Cleanup(func() { mustCompose(t, "start", "watchcache-1") })
	start := time.Now()
	mustKubectl(t, manifest(t, deployment("wc-kill", 2)), "apply", "-f", "-")
	defer deleteDeployment(t, "wc-kill")
	waitRunning(t, "default", "app=wc-kill", 2, 3*time.Minute)
	t.Logf("watchcache-1 killed: 2 pods Running %v after the apply", time.Since(start).Round(time.Millisecond))
}
