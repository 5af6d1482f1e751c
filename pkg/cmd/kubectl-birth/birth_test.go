package main

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net/http"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/propagation"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/pkg/jaegertest"
	"podline.dev/pkg/telemetry"
	"podline.dev/pkg/testenv"
)

// fromObject is a context whose span is the traceparent stamped on an
// object, as components start their spans.
func fromObject(md objectMeta) context.Context {
	return propagation.TraceContext{}.Extract(context.Background(),
		propagation.MapCarrier{"traceparent": md.Annotations[telemetry.TraceparentAnnotation]})
}

type written struct {
	Metadata objectMeta `json:"metadata"`
}

// traced starts a component's span that lasts at least d.
func traced(ctx context.Context, tr trace.Tracer, name string, d time.Duration, attrs ...attribute.KeyValue) (context.Context, trace.Span) {
	ctx, sp := tr.Start(ctx, name, trace.WithAttributes(attrs...))
	time.Sleep(d)
	return ctx, sp
}

// TestBirthOfADeploymentFromItsTrace plays a Deployment's birth against a
// real apiserver (whose own spans go to a real Jaeger) with the
// controller-manager, scheduler and kubelet played by the test, each
// starting its spans from the traceparent on the object it acts on and
// writing back over REST, as the components do. The plugin then draws the
// first Pod's birth from Jaeger's query API.
func TestBirthOfADeploymentFromItsTrace(t *testing.T) {
	j := jaegertest.Start(t)
	traceAPIServerTo(t, exportTo(t, "apiserver", j))
	c := startCluster(t)
	kubectl := exportTo(t, "kubectl", j).Tracer("kubectl")
	cm := exportTo(t, "controller-manager", j).Tracer("deployment-controller")
	sched := exportTo(t, "scheduler", j).Tracer("podline.dev/services/scheduler")
	kubelet := exportTo(t, "kubelet", j).Tracer("podline.dev/services/kubelet")
	jaegerFlags := []string{"--jaeger", j.Query, "--jaeger-ca-file", j.CAFile}
	post := func(ctx context.Context, path string, body any) objectMeta {
		var w written
		c.send(t, ctx, http.MethodPost, path, body, &w)
		return w.Metadata
	}

	ctx, apply := kubectl.Start(context.Background(), "kubectl apply")
	traceID := apply.SpanContext().TraceID().String()
	template := map[string]any{"metadata": map[string]any{"labels": map[string]string{"app": "web"}},
		"spec": map[string]any{"containers": []any{map[string]any{"name": "web", "image": "podline/demo:1"}}}}
	selector := map[string]any{"matchLabels": map[string]string{"app": "web"}}
	d := post(ctx, "/apis/apps/v1/namespaces/default/deployments", map[string]any{
		"apiVersion": "apps/v1", "kind": "Deployment", "metadata": map[string]any{"name": "web", "namespace": "default"},
		"spec": map[string]any{"replicas": 2, "selector": selector, "template": template}})
	apply.End()

	// controller-manager: the Deployment's ReplicaSet, then its two Pods.
	dctx, dsync := traced(fromObject(d), cm, "deployment.sync", 2*time.Millisecond)
	rs := post(dctx, "/apis/apps/v1/namespaces/default/replicasets", map[string]any{
		"apiVersion": "apps/v1", "kind": "ReplicaSet",
		"metadata": map[string]any{"name": "web-7c9d8f6b5", "namespace": "default", "labels": map[string]string{"app": "web"},
			"ownerReferences": []any{map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web", "uid": d.UID, "controller": true}}},
		"spec": map[string]any{"replicas": 2, "selector": selector, "template": template}})
	dsync.End()
	rctx, rsync := traced(fromObject(rs), cm, "replicaset.sync", time.Millisecond)
	pods := map[string]objectMeta{}
	for _, name := range []string{"web-a", "web-b"} {
		pods[name] = post(rctx, "/api/v1/namespaces/default/pods", podJSON(name, rs.UID, nil))
	}
	rsync.End()

	// scheduler: one cycle per Pod, each on its own node.
	nodes := map[string]string{"web-a": "worker-1", "web-b": "worker-2"}
	for name, node := range nodes {
		sctx, cycle := traced(fromObject(pods[name]), sched, "SchedulePod", time.Millisecond,
			attribute.String("pod", "default/"+name), attribute.String("node", node), attribute.Int("nodes.evaluated", 3), attribute.Int("nodes.feasible", 2))
		_, score := traced(sctx, sched, "Score", time.Millisecond, attribute.String("score.rank.01", node+" total=187 NodeResourcesFit=87 TaintToleration=100"))
		score.End()
		bctx, bind := traced(sctx, sched, "Bind", time.Millisecond, attribute.String("node", node))
		c.send(t, bctx, http.MethodPost, "/api/v1/namespaces/default/pods/"+name+"/binding", map[string]any{
			"apiVersion": "v1", "kind": "Binding", "metadata": map[string]any{"name": name, "namespace": "default"},
			"target": map[string]any{"apiVersion": "v1", "kind": "Node", "name": node}}, nil)
		bind.End()
		cycle.End()
	}

	// kubelet: on each node, the Pod's sandbox, network, image and container, then Ready.
	for name := range nodes {
		var raw json.RawMessage
		c.send(t, context.Background(), http.MethodGet, "/api/v1/namespaces/default/pods/"+name, nil, &raw)
		var p map[string]any
		var md written
		if json.Unmarshal(raw, &p) != nil || json.Unmarshal(raw, &md) != nil {
			t.Fatalf("pod %s: %s", name, raw)
		}
		kctx, sync := traced(fromObject(md.Metadata), kubelet, "SyncPod", time.Millisecond, attribute.String("pod", "default/"+name), attribute.String("update", "create"))
		_, ready := traced(kctx, kubelet, "FirstReadiness", 0)
		sbctx, sandbox := traced(kctx, kubelet, "RunPodSandbox", 3*time.Millisecond)
		_, cni := traced(sbctx, kubelet, "CNI ADD", 2*time.Millisecond, attribute.StringSlice("ips", []string{"10.244.1.5"}))
		cni.End()
		sandbox.End()
		for _, s := range []string{"PullImage", "CreateContainer", "StartContainer"} {
			_, sp := traced(kctx, kubelet, s, 2*time.Millisecond, attribute.String("container", "web"))
			sp.End()
		}
		p["status"] = map[string]any{"phase": "Running", "conditions": []any{map[string]any{
			"type": "Ready", "status": "True", "lastTransitionTime": time.Now().UTC().Format(time.RFC3339)}}}
		c.send(t, kctx, http.MethodPut, "/api/v1/namespaces/default/pods/"+name+"/status", p, nil)
		ready.End()
		sync.End()
	}

	// Every span was exported as it ended; wait until Jaeger has stored
	// them all (both Pods' kubelet spans, and no more arriving).
	last := 0
	testenv.Eventually(t, 30*time.Second, "the whole trace stored in Jaeger", func() error {
		spans, err := fetchTrace(context.Background(), j.Client(t), j.Query, traceID)
		if err != nil {
			return err
		}
		syncs := 0
		for _, s := range spans {
			if s.Name == "SyncPod" {
				syncs++
			}
		}
		n := len(spans)
		if syncs < 2 || n != last {
			last = n
			time.Sleep(300 * time.Millisecond)
			return fmt.Errorf("%d spans, %d SyncPod", n, syncs)
		}
		return nil
	})
	var out string
	testenv.Eventually(t, 30*time.Second, "the whole birth drawn", func() error {
		stdout, stderr, code := c.birth(t, append([]string{"deploy/web"}, jaegerFlags...)...)
		out = stdout
		if code != 0 {
			return fmt.Errorf("exit %d: %s", code, stderr)
		}
		for _, want := range []string{"\napiserver ", "\ncontroller-manager ", "\nscheduler ", "\nkubelet ", "StartContainer", "replicaset.sync"} {
			if !strings.Contains(out, want) {
				return fmt.Errorf("no %s line yet:\n%s", strings.TrimSpace(want), out)
			}
		}
		return nil
	})
	t.Logf("kubectl birth deploy/web:\n%s", out)

	for _, want := range []string{
		"Birth of pod default/web-a on worker-1 (trace " + traceID + ")",
		"POST /apis/apps/v1/namespaces/default/deployments",
		"/registry/pods/default/web-a", "node worker-1", "score worker-1 total=187",
		"Trace: " + j.Query + "/trace/" + traceID,
	} {
		if !strings.Contains(out, want) {
			t.Errorf("output lacks %q", want)
		}
	}
	for _, sibling := range []string{"web-b", "worker-2"} {
		if strings.Contains(out, sibling) {
			t.Errorf("the first Pod's birth shows its sibling's %q", sibling)
		}
	}
	prev := -1
	for _, s := range []string{"kubectl apply", "deployments", "deployment.sync", "replicaset.sync", "SchedulePod", "binding", "SyncPod", "CNI ADD", "StartContainer", "\npod "} {
		i := strings.Index(out, s)
		if i <= prev {
			t.Errorf("step %q at %d, not after the step before it (%d)", s, i, prev)
		}
		prev = i
	}

	second, _, code := c.birth(t, append([]string{"pod/web-b"}, jaegerFlags...)...)
	if code != 0 || !strings.Contains(second, "default/web-b on worker-2") || !strings.Contains(second, "score worker-2") || strings.Contains(second, "web-a") {
		t.Errorf("pod/web-b: exit %d\n%s", code, second)
	}
	// Jaeger's answer for a trace it does not hold is the fallback's cue.
	if _, err := fetchTrace(context.Background(), j.Client(t), j.Query, "0123456789abcdef0123456789abcdef"); !errors.Is(err, errNoTrace) {
		t.Errorf("unknown trace: %v, want errNoTrace", err)
	}
	all, _, _ := c.birth(t, append([]string{"deploy/web", "--all-pods"}, jaegerFlags...)...)
	if n := strings.Count(all, "Birth of pod "); n != 2 {
		t.Errorf("--all-pods printed %d births, want 2", n)
	}

	// Jaeger's certificate verified with another cluster's CA is refused:
	// the plugin says so and draws the Events instead.
	otherCA := filepath.Join(jaegertest.NewPKI(t, t.TempDir()), "ca.crt")
	refused, _, code := c.birth(t, "pod/web-a", "--jaeger", j.Query, "--jaeger-ca-file", otherCA)
	if code != 0 || !strings.Contains(refused, "fallback: jaeger query API unreachable") ||
		!strings.Contains(refused, "certificate signed by unknown authority") {
		t.Errorf("with another CA: exit %d\n%s", code, refused)
	}
}
