package test

import (
	"bytes"
	"fmt"
	"net/http"
	"strings"
	"testing"

	"podline.dev/pkg/telemetry"
)

// A REST write continues the caller's trace: the request, the in-process
// gRPC call, validation and the etcd transaction are spans of one trace,
// and the stored object carries that trace's traceparent.
func TestWriteContinuesCallersTraceAndStampsTheObject(t *testing.T) {
	rec := recordSpans()
	c, s := newREST(t)
	const traceID = "4bf92f3577b34da6a3ce929d0e0e4736"
	req, _ := http.NewRequest("POST", c.base+"/api/v1/namespaces/default/pods", bytes.NewReader([]byte(fmt.Sprintf(podJSON, "traced"))))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := c.http.Do(req)
	if err != nil || resp.StatusCode != 201 {
		t.Fatalf("create: %v %v", resp, err)
	}
	resp.Body.Close()

	stored, err := startServerClient(s).Get(ctxFor(t), "default", "traced")
	if err != nil {
		t.Fatal(err)
	}
	if tp := stored.GetMetadata().GetAnnotations()[telemetry.TraceparentAnnotation]; !strings.Contains(tp, traceID) {
		t.Fatalf("stored traceparent %q is not in trace %s", tp, traceID)
	}
	want := map[string]bool{"POST /api/v1/namespaces/default/pods": false, "podline.core.v1.Pods/Create": false, "validation": false, "etcd txn create": false}
	for _, sp := range rec.Ended() {
		if _, ok := want[sp.Name()]; ok && sp.SpanContext().TraceID().String() == traceID {
			want[sp.Name()] = true
		}
	}
	for name, seen := range want {
		if !seen {
			t.Errorf("no span %q in trace %s", name, traceID)
		}
	}
}
