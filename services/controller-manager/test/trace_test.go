package test

import (
	"context"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	"podline.dev/pkg/telemetry"
	"podline.dev/services/apiserver/apiservertest"
)

// traceID is the trace of an object's traceparent annotation.
func traceID(annotations map[string]string) string {
	parts := strings.Split(annotations[telemetry.TraceparentAnnotation], "-")
	if len(parts) != 4 {
		return ""
	}
	return parts[1]
}

// One Deployment create is one trace: the ReplicaSet and the Pods carry
// traceparents of the same trace as the Deployment the apiserver stamped.
func TestDeploymentReplicaSetAndPodsShareOneTrace(t *testing.T) {
	shutdown, err := telemetry.Setup(context.Background(), "controller-manager-test", "")
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = shutdown(context.Background()) })
	s := apiservertest.Start(t)
	startManager(t, s, nil)
	ctx := ctxFor(t, 60*time.Second)
	d, err := client.Deployments(s.Conn).Create(ctx, deploymentOf("web", 2, "web:1"))
	if err != nil {
		t.Fatal(err)
	}
	trace := traceID(d.GetMetadata().GetAnnotations())
	if trace == "" {
		t.Fatalf("the apiserver stamped no traceparent: %v", d.GetMetadata().GetAnnotations())
	}
	rs, pods := rolledOut(ctx, t, s, d, 2)
	if got := traceID(rs.GetMetadata().GetAnnotations()); got != trace {
		t.Errorf("replica set in trace %q, deployment in %q", got, trace)
	}
	for _, p := range pods {
		if got := traceID(p.GetMetadata().GetAnnotations()); got != trace {
			t.Errorf("pod %s in trace %q, deployment in %q", p.GetMetadata().GetName(), got, trace)
		}
	}
}
