package main

import (
	"context"
	"fmt"
	"net"
	"net/http"
	"strings"
	"testing"
	"time"
)

// recordEvent writes an Event about pod the way podline's recorder names
// them (<pod>.<hex nanoseconds>), at.
func (c *cluster) recordEvent(t *testing.T, pod, component, reason, message string, at time.Time) {
	t.Helper()
	ts := at.UTC().Format(time.RFC3339)
	c.send(t, context.Background(), http.MethodPost, "/api/v1/namespaces/default/events", map[string]any{
		"apiVersion": "v1", "kind": "Event",
		"metadata":       map[string]any{"name": fmt.Sprintf("%s.%x", pod, at.UnixNano()), "namespace": "default"},
		"involvedObject": map[string]any{"kind": "Pod", "namespace": "default", "name": pod, "apiVersion": "v1"},
		"reason":         reason, "message": message, "type": "Normal", "count": 1,
		"source":         map[string]any{"component": component},
		"firstTimestamp": ts, "lastTimestamp": ts,
	}, nil)
}

// closedURL is an http URL on which nothing listens.
func closedURL(t *testing.T) string {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	u := "http://" + l.Addr().String()
	l.Close()
	return u
}

func TestWithoutATraceTheEventsAreTheTimeline(t *testing.T) {
	c := startCluster(t)
	c.send(t, context.Background(), http.MethodPost, "/api/v1/namespaces/default/pods", podJSON("plain", "", nil), nil)
	c.send(t, context.Background(), http.MethodPost, "/api/v1/namespaces/default/pods",
		podJSON("traced", "", map[string]string{"podline.dev/traceparent": "00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01"}), nil)
	t0 := time.Now().Truncate(time.Second).Add(-10 * time.Second)
	for _, pod := range []string{"plain", "traced"} {
		// Written out of order: the timeline sorts them by when they happened.
		c.recordEvent(t, pod, "kubelet", "Started", "Started container web", t0.Add(2400*time.Millisecond))
		c.recordEvent(t, pod, "default-scheduler", "Scheduled", "Successfully assigned default/"+pod+" to worker-1", t0.Add(20*time.Millisecond))
		c.recordEvent(t, pod, "kubelet", "Pulling", `Pulling image "podline/demo:1"`, t0.Add(1100*time.Millisecond))
	}
	c.recordEvent(t, "other", "kubelet", "Pulling", "not about these pods", t0)

	for _, tc := range []struct{ pod, why string }{
		{"plain", "the pod has no podline.dev/traceparent annotation"},
		{"traced", "jaeger query API unreachable"},
	} {
		out, errOut, code := c.birth(t, "pod/"+tc.pod, "--jaeger", closedURL(t))
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.pod, code, errOut)
		}
		t.Logf("kubectl birth pod/%s:\n%s", tc.pod, out)
		if !strings.Contains(out, "fallback: ") || !strings.Contains(out, tc.why) || !strings.Contains(out, "timeline from the pod's Events") {
			t.Errorf("%s: output does not say it is the fallback and why (%q):\n%s", tc.pod, tc.why, out)
		}
		var order []string
		for _, line := range strings.Split(out, "\n") {
			f := strings.Fields(line)
			if len(f) >= 4 && (f[0] == "kubelet" || f[0] == "default-scheduler") {
				order = append(order, f[0]+" "+f[1]+" "+f[2])
			}
			if strings.Contains(line, "not about these pods") {
				t.Errorf("%s: another pod's event shown: %q", tc.pod, line)
			}
		}
		want := "default-scheduler Scheduled +0µs|kubelet Pulling +1.08s|kubelet Started +2.38s"
		if got := strings.Join(order, "|"); got != want {
			t.Errorf("%s: timeline %q, want %q\n%s", tc.pod, got, want, out)
		}
	}
}

func TestMissingObjectsAreKubernetesErrors(t *testing.T) {
	c := startCluster(t)
	for _, arg := range []string{"pod/nope", "deploy/nope"} {
		_, errOut, code := c.birth(t, arg, "--jaeger", closedURL(t))
		kind := map[string]string{"pod/nope": `pods "nope" not found`, "deploy/nope": `deployments.apps "nope" not found`}[arg]
		if code != 1 || !strings.HasPrefix(errOut, "Error from server (NotFound): ") || !strings.Contains(errOut, kind) {
			t.Errorf("%s: exit %d, stderr %q; want 1 and Error from server (NotFound): %s", arg, code, errOut, kind)
		}
	}
	if _, errOut, code := c.birth(t, "svc/web"); code != 1 || !strings.Contains(errOut, `kind "svc" is not pod or deploy`) {
		t.Errorf("svc/web: exit %d, stderr %q", code, errOut)
	}
}

func TestADeploymentsPodsAreThoseOfItsReplicaSets(t *testing.T) {
	c := startCluster(t)
	selector := map[string]any{"matchLabels": map[string]string{"app": "web"}}
	template := map[string]any{"metadata": map[string]any{"labels": map[string]string{"app": "web"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "podline/demo:1"}}}}
	var d, rs written
	c.send(t, context.Background(), http.MethodPost, "/apis/apps/v1/namespaces/default/deployments", map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{"replicas": 2, "selector": selector, "template": template}}, &d)
	if _, errOut, code := c.birth(t, "deploy/web", "--jaeger", closedURL(t)); code != 1 || !strings.Contains(errOut, "deployment default/web has no pods yet") {
		t.Errorf("no pods: exit %d, stderr %q", code, errOut)
	}
	c.send(t, context.Background(), http.MethodPost, "/apis/apps/v1/namespaces/default/replicasets", map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "web-7c9d8f6b5", "namespace": "default", "labels": map[string]string{"app": "web"},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": d.Metadata.UID, "controller": true}}},
		"spec": map[string]any{"replicas": 2, "selector": selector, "template": template}}, &rs)
	// The first Pod is the oldest, then by name; "stray" would sort first.
	for _, p := range []map[string]any{podJSON("web-b", rs.Metadata.UID, nil), podJSON("web-c", rs.Metadata.UID, nil), podJSON("stray", "", nil)} {
		c.send(t, context.Background(), http.MethodPost, "/api/v1/namespaces/default/pods", p, nil)
	}
	out, errOut, code := c.birth(t, "deploy/web", "--jaeger", closedURL(t))
	if code != 0 || !strings.HasPrefix(out, "Birth of pod default/web-b\n") || strings.Count(out, "Birth of pod") != 1 {
		t.Errorf("deploy/web: exit %d %s\n%s", code, errOut, out)
	}
	out, _, _ = c.birth(t, "deploy/web", "--all-pods", "--jaeger", closedURL(t))
	var births []string
	for _, line := range strings.Split(out, "\n") {
		if name, ok := strings.CutPrefix(line, "Birth of pod "); ok {
			births = append(births, name)
		}
	}
	if got := strings.Join(births, ","); got != "default/web-b,default/web-c" {
		t.Errorf("--all-pods showed %q, want the ReplicaSet's two pods and not the stray with the same labels", got)
	}
}
