package test

import (
	"bytes"
	"encoding/json"
	"net/http"
	"strings"
	"sync"
	"testing"

	sdktrace "go.opentelemetry.io/otel/sdk/trace"

	"podline.dev/pkg/client"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/apiserver/internal/audit"
)

// lockedBuffer is an audit sink written by the server's goroutines.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) events(t *testing.T) []audit.Event {
	b.mu.Lock()
	defer b.mu.Unlock()
	var out []audit.Event
	for _, line := range strings.Split(strings.TrimSpace(b.buf.String()), "\n") {
		if line == "" {
			continue
		}
		var ev audit.Event
		if err := json.Unmarshal([]byte(line), &ev); err != nil {
			t.Fatalf("audit line %q: %v", line, err)
		}
		out = append(out, ev)
	}
	return out
}

const auditPolicy = `
apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: [RequestReceived]
rules:
- level: None
  resources: [{group: "rbac.authorization.k8s.io"}]
- level: None
  nonResourceURLs: ["/healthz*", "/readyz*", "/livez*"]
- level: Request
  resources: [{group: "", resources: ["pods"]}]
- level: Metadata
`

func TestAuditLogAndChainSpans(t *testing.T) {
	spans := recordSpans()
	policy, err := audit.ParsePolicy([]byte(auditPolicy))
	if err != nil {
		t.Fatal(err)
	}
	sink := &lockedBuffer{}
	s := apiservertest.StartSecure(t, apiservertest.WithAudit(sink, policy))
	ctx := ctxFor(t)

	const traceID = "6e0c63257de34c92bf9efcd03927272e"
	req, _ := http.NewRequest("POST", s.URL+"/api/v1/namespaces/default/pods", strings.NewReader(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"web"},"spec":{"containers":[{"name":"web","image":"registry.podline:5000/demo/web:1.0"}]}}`))
	req.Header.Set("Content-Type", "application/json")
	req.Header.Set("traceparent", "00-"+traceID+"-00f067aa0ba902b7-01")
	resp, err := s.HTTPClientWith(t, s.Credentials(t, "alice", "devs")).Do(req)
	if err != nil {
		t.Fatal(err)
	}
	if code, _ := statusOf(t, resp); code != 403 {
		t.Fatalf("alice's create: %d", code)
	}
	if _, _, err := client.Pods(s.Conn).List(ctx, &metav1.ListRequest{Namespace: "default"}); err != nil {
		t.Fatal(err)
	}
	if code, _ := restDo(t, s.HTTPClient(), "GET", s.URL+"/api/v1/pods", nil); code != 401 {
		t.Fatalf("anonymous: %d", code)
	}
	if code, _ := restDo(t, s.HTTPClient(), "GET", s.URL+"/healthz", nil); code != 200 {
		t.Fatalf("healthz: %d", code)
	}

	var denied, listed, anonymous *audit.Event
	for _, ev := range sink.events(t) {
		if ev.Stage == audit.StageRequestReceived {
			t.Fatalf("RequestReceived is omitted by the policy: %+v", ev)
		}
		if strings.HasPrefix(ev.RequestURI, "/healthz") || (ev.ObjectRef != nil && ev.ObjectRef.APIGroup == "rbac.authorization.k8s.io") {
			t.Fatalf("a None rule's request was logged: %+v", ev)
		}
		switch {
		case ev.User.Username == "alice" && ev.Verb == "create":
			denied = &ev
		case ev.User.Username == "kubernetes-admin" && ev.Verb == "list" && ev.ObjectRef != nil && ev.ObjectRef.Resource == "pods":
			listed = &ev
		case ev.ResponseStatus != nil && ev.ResponseStatus.Code == 401:
			anonymous = &ev
		}
	}
	if denied == nil || denied.ResponseStatus.Code != 403 || denied.Level != audit.LevelRequest ||
		denied.ObjectRef.Namespace != "default" || denied.RequestURI != "/api/v1/namespaces/default/pods" ||
		denied.TraceID != traceID || denied.Latency == "" || denied.Stage != audit.StageResponseComplete {
		t.Fatalf("alice's refused create: %+v", denied)
	}
	if listed == nil || listed.ResponseStatus.Code != 200 || !strings.HasSuffix(listed.RequestURI, "/List") || len(listed.SourceIPs) != 1 {
		t.Fatalf("admin's gRPC list: %+v", listed)
	}
	if anonymous == nil || anonymous.RequestURI != "/api/v1/pods" {
		t.Fatalf("anonymous 401: %+v", anonymous)
	}

	// The chain's stages are spans of the request's trace, with their decisions.
	var authnSpan, authzSpan sdktrace.ReadOnlySpan
	for _, sp := range spans.Ended() {
		if sp.SpanContext().TraceID().String() != traceID {
			continue
		}
		switch sp.Name() {
		case "authentication":
			authnSpan = sp
		case "authorization":
			authzSpan = sp
		}
	}
	if authnSpan == nil || authzSpan == nil {
		t.Fatalf("authentication %v, authorization %v spans in trace %s", authnSpan, authzSpan, traceID)
	}
	attrs := map[string]string{}
	for _, kv := range append(authnSpan.Attributes(), authzSpan.Attributes()...) {
		attrs[string(kv.Key)] = kv.Value.Emit()
	}
	if attrs["user.name"] != "alice" || !strings.Contains(attrs["user.groups"], "devs") ||
		attrs["authn.decision"] != "authenticated" || attrs["authz.decision"] != "no-opinion" || attrs["authz.resource"] != "pods" {
		t.Fatalf("span attributes: %v", attrs)
	}
}
