package authorize

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
	"time"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/clock"
)

// script answers from a table and counts what it was asked.
type script struct {
	answers map[string]Decision
	err     error
	asked   int
}

func (s *script) Authorize(_ context.Context, a Attributes) (Decision, error) {
	s.asked++
	return s.answers[a.User], s.err
}

var kubeletWatch = Attributes{User: "system:node:n1", Groups: []string{"system:nodes"}, Verb: "watch", Resource: "pods", FieldSelector: "spec.nodeName=n1"}

func TestCachedKeepsDecisionsForTheTTLAndNotErrors(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	s := &script{answers: map[string]Decision{"system:node:n1": {Allowed: true}}}
	c := NewCached(s, 10*time.Second, clk)
	ctx := context.Background()
	for range 3 {
		if d, err := c.Authorize(ctx, kubeletWatch); err != nil || !d.Allowed {
			t.Fatalf("%v %v", d, err)
		}
	}
	if s.asked != 1 {
		t.Errorf("asked %d times within the TTL, want 1", s.asked)
	}
	other := kubeletWatch
	other.FieldSelector = "spec.nodeName=n2"
	if _, err := c.Authorize(ctx, other); err != nil || s.asked != 2 {
		t.Errorf("another selector is another question: asked %d, err %v", s.asked, err)
	}
	clk.Step(10 * time.Second)
	if _, err := c.Authorize(ctx, kubeletWatch); err != nil || s.asked != 3 {
		t.Errorf("after the TTL: asked %d, err %v; want asked again", s.asked, err)
	}
	s.err = errors.New("apiserver unreachable")
	clk.Step(10 * time.Second)
	for range 2 {
		if _, err := c.Authorize(ctx, kubeletWatch); err == nil {
			t.Fatal("an error was answered from the cache")
		}
	}
	if s.asked != 5 {
		t.Errorf("asked %d, want every failed question asked again", s.asked)
	}
}

func TestCheckAnswersKubernetes403And503(t *testing.T) {
	ctx := context.Background()
	s := &script{answers: map[string]Decision{"system:node:n1": {Reason: "can only list/watch pods with spec.nodeName=n1 field selector"}}}
	err := Check(ctx, s, Attributes{User: "system:node:n1", Verb: "watch", Resource: "pods"})
	want := `pods is forbidden: User "system:node:n1" cannot watch resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName=n1 field selector`
	if !apierrors.IsForbidden(err) || apierrors.FromError(err).Status().GetMessage() != want {
		t.Errorf("got %v\nwant 403 %s", err, want)
	}
	err = Check(ctx, s, Attributes{User: "jane", Verb: "list", Group: "apps", Resource: "deployments", Namespace: "default"})
	want = `deployments.apps is forbidden: User "jane" cannot list resource "deployments" in API group "apps" in the namespace "default"`
	if apierrors.FromError(err).Status().GetMessage() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	err = Check(ctx, s, Attributes{User: "jane", Verb: "get", Path: "/metrics"})
	if want = `forbidden: User "jane" cannot get path "/metrics"`; apierrors.FromError(err).Status().GetMessage() != want {
		t.Errorf("got %v\nwant %s", err, want)
	}
	s.err = errors.New("connection refused")
	if err := Check(ctx, s, kubeletWatch); !apierrors.IsServiceUnavailable(err) {
		t.Errorf("no decision: %v, want 503", err)
	}
}

// Review posts Kubernetes' SubjectAccessReview and reads its status.
func TestReviewAsksWithASubjectAccessReview(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != ReviewPath {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &got)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":false,"reason":"no RBAC policy matched"}}`))
	}))
	defer srv.Close()
	d, err := (&Review{URL: srv.URL, Client: srv.Client()}).Authorize(context.Background(), kubeletWatch)
	if err != nil || d.Allowed || d.Reason != "no RBAC policy matched" {
		t.Fatalf("%+v %v", d, err)
	}
	spec, _ := got["spec"].(map[string]any)
	ra, _ := spec["resourceAttributes"].(map[string]any)
	fs, _ := ra["fieldSelector"].(map[string]any)
	if got["kind"] != "SubjectAccessReview" || spec["user"] != "system:node:n1" || ra["verb"] != "watch" ||
		ra["resource"] != "pods" || fs["rawSelector"] != "spec.nodeName=n1" {
		t.Errorf("sent %v", got)
	}

	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","message":"subjectaccessreviews.authorization.k8s.io is forbidden"}`))
	}))
	defer refused.Close()
	if _, err := (&Review{URL: refused.URL, Client: refused.Client()}).Authorize(context.Background(), kubeletWatch); err == nil {
		t.Error("a refused review was taken for a decision")
	}
}
