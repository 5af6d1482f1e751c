//go:build e2e

package e2e

import (
	"fmt"
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

// replicaReady probes a watchcache replica's /readyz from inside its container.
func replicaReady(t testing.TB, service string) bool {
	_, err := compose(t, "exec", "-T", service, "/usr/local/bin/watchcache", "--probe=http://127.0.0.1:8080/readyz")
	return err == nil
}

// With NATS stopped the watchcache replicas step aside (not ready, their
// watches ended) and every component watches the apiserver: writes go on
// and a new Deployment's Pods start. With NATS back the replicas catch up
// from the apiserver, serve again, and Pods still start.
func TestNATSStopped(t *testing.T) {
	replicas := []string{"watchcache-1", "watchcache-2"}
	mustCompose(t, "stop", "nats")
	t.Cleanup(func() { mustCompose(t, "start", "nats") })
	eventually(t, time.Minute, "both replicas not ready without NATS", func() error {
		for _, r := range replicas {
			if replicaReady(t, r) {
				return fmt.Errorf("%s still ready", r)
			}
		}
		return nil
	})
	start := time.Now()
	mustKubectl(t, manifest(t, deployment("nats-down", 2)), "apply", "-f", "-")
	defer deleteDeployment(t, "nats-down")
	waitRunning(t, "default", "app=nats-down", 2, 3*time.Minute)
	t.Logf("NATS stopped: 2 pods Running %v after the apply", time.Since(start).Round(time.Millisecond))

	mustCompose(t, "start", "nats")
	start = time.Now()
	eventually(t, 2*time.Minute, "both replicas ready again", func() error {
		for _, r := range replicas {
			if !replicaReady(t, r) {
				return fmt.Errorf("%s not ready", r)
			}
		}
		return nil
	})
	t.Logf("NATS back: replicas ready after %v", time.Since(start).Round(time.Millisecond))
	mustKubectl(t, manifest(t, deployment("nats-back", 2)), "apply", "-f", "-")
	defer deleteDeployment(t, "nats-back")
	waitRunning(t, "default", "app=nats-back", 2, 3*time.Minute)
}
