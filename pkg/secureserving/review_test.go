package secureserving

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/http/httptest"
	"testing"
)

// SubjectAccessReviews posts Kubernetes' SubjectAccessReview with the
// request's attributes and reads its status; a refused review is an
// error, not a decision.
func TestSubjectAccessReviewsPostKubernetesReviews(t *testing.T) {
	var got map[string]any
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if r.Method != http.MethodPost || r.URL.Path != SubjectAccessReviewPath {
			http.NotFound(w, r)
			return
		}
		body, _ := io.ReadAll(r.Body)
		_ = json.Unmarshal(body, &got)
		w.WriteHeader(http.StatusCreated)
		_, _ = w.Write([]byte(`{"apiVersion":"authorization.k8s.io/v1","kind":"SubjectAccessReview","status":{"allowed":false,"reason":"no RBAC policy matched"}}`))
	}))
	defer srv.Close()
	z := NewSubjectAccessReviews(srv.URL, srv.Client())
	watch := Attributes{User: User{Name: "system:node:n1", Groups: []string{"system:nodes"}}, Verb: "watch", Resource: "pods", FieldSelector: "spec.nodeName=n1"}
	sa := User{Name: "system:serviceaccount:default:web", UID: "u-1", Groups: []string{"system:serviceaccounts"},
		Extra: map[string][]string{"authentication.kubernetes.io/pod-name": {"web-0"}}}
	d, err := z.Authorize(context.Background(), watch)
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
	if _, err := z.Authorize(context.Background(), Attributes{User: sa, Verb: "get", Path: "/metrics"}); err != nil {
		t.Fatal(err)
	}
	spec, _ = got["spec"].(map[string]any)
	extra, _ := spec["extra"].(map[string]any)
	if spec["uid"] != "u-1" || fmt.Sprint(extra["authentication.kubernetes.io/pod-name"]) != "[web-0]" {
		t.Errorf("the user's uid and extra were not sent: %v", spec)
	}
	nra, _ := spec["nonResourceAttributes"].(map[string]any)
	if nra["path"] != "/metrics" || nra["verb"] != "get" || spec["resourceAttributes"] != nil {
		t.Errorf("sent %v", got)
	}

	refused := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, _ *http.Request) {
		w.WriteHeader(http.StatusForbidden)
		_, _ = w.Write([]byte(`{"kind":"Status","message":"subjectaccessreviews.authorization.k8s.io is forbidden"}`))
	}))
	defer refused.Close()
	if _, err := NewSubjectAccessReviews(refused.URL, refused.Client()).Authorize(context.Background(), watch); err == nil {
		t.Error("a refused review was taken for a decision")
	}
}
