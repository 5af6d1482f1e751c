//go:build e2e

package e2e

import (
	"fmt"
	"strings"
	"testing"
	"time"
)

type lease struct {
	Spec struct {
		HolderIdentity string `json:"holderIdentity"`
	} `json:"spec"`
}

// holder returns the container (compose service) named by a Lease in
// kube-system: holderIdentity is "<hostname>_<id>", hostnames are the
// service names.
func holder(t testing.TB, name string) string {
	t.Helper()
	var l lease
	getJSON(t, "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/"+name, &l)
	host, _, _ := strings.Cut(l.Spec.HolderIdentity, "_")
	return host
}

// The Leases kube-scheduler and kube-controller-manager name the active
// replica; stopping it hands the Lease over and new Pods still start.
func TestLeaderElectionHandsOver(t *testing.T) {
	for _, c := range []struct{ lease, a, b string }{
		{"kube-scheduler", "scheduler-1", "scheduler-2"},
		{"kube-controller-manager", "controller-manager-1", "controller-manager-2"},
	} {
		leader := holder(t, c.lease)
		if leader != c.a && leader != c.b {
			t.Fatalf("Lease %s held by %q, want %s or %s", c.lease, leader, c.a, c.b)
		}
		other := c.a
		if leader == c.a {
			other = c.b
		}
		out := mustKubectl(t, "", "get", "lease", "-n", "kube-system", c.lease, "-o", "jsonpath={.spec.holderIdentity}")
		if !strings.HasPrefix(out, leader) {
			t.Errorf("kubectl jsonpath holderIdentity %q, want prefix %s", out, leader)
		}
		mustCompose(t, "stop", leader)
		t.Cleanup(func() { mustCompose(t, "start", leader) })
		start := time.Now()
		eventually(t, 60*time.Second, c.lease+" handed to "+other, func() error {
			if h := holder(t, c.lease); h != other {
				return fmt.Errorf("held by %q", h)
			}
			return nil
		})
		t.Logf("%s: %s stopped, %s leads after %v", c.lease, leader, other, time.Since(start).Round(time.Millisecond))
	}
	// Both new leaders at work: a Deployment becomes Running Pods.
	mustKubectl(t, manifest(t, deployment("handover", 2)), "apply", "-f", "-")
	defer deleteDeployment(t, "handover")
	waitRunning(t, "default", "app=handover", 2, 3*time.Minute)
}

// The static pod in the control-plane's manifest directory is mirrored into
// the API, and comes back when its mirror is deleted.
func TestStaticPodMirror(t *testing.T) {
	const name = "static-web-control-plane"
	var p pod
	eventually(t, 2*time.Minute, "mirror pod Running", func() error {
		if err := tryGetJSON(t, "/api/v1/namespaces/kube-system/pods/"+name, &p); err != nil {
			return err
		}
		if p.Status.Phase != "Running" {
			return fmt.Errorf("phase %q", p.Status.Phase)
		}
		return nil
	})
	if got := p.Metadata.Annotations["kubernetes.io/config.source"]; got != "file" {
		t.Errorf("config.source %q, want file", got)
	}
	if p.Spec.NodeName != "control-plane" {
		t.Errorf("mirror pod on %q", p.Spec.NodeName)
	}
	out := mustKubectl(t, "", "get", "pod", "-n", "kube-system", name, "-o", `jsonpath={.metadata.annotations.kubernetes\.io/config\.source}`)
	if out != "file" {
		t.Errorf("kubectl jsonpath printed %q, want file", out)
	}
	mustKubectl(t, "", "delete", "pod", "-n", "kube-system", name, "--wait=false")
	eventually(t, time.Minute, "mirror pod recreated", func() error {
		var again pod
		if err := tryGetJSON(t, "/api/v1/namespaces/kube-system/pods/"+name, &again); err != nil {
			return err
		}
		if again.Metadata.UID == p.Metadata.UID {
			return fmt.Errorf("still the old mirror pod")
		}
		return nil
	})
}
