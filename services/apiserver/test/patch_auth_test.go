package test

import (
	"bytes"
	"net/http"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	appsv1 "podline.dev/proto/apps/v1"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// RBAC sees PATCH, the scale subresource and deletecollection with
// Kubernetes' verbs and subresources.
func TestAuthPatchScaleAndDeleteCollectionVerbs(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	if _, err := client.For[*appsv1.Deployment](s.Conn).Create(ctx, grpcDeployment("web")); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*rbacv1.Role](s.Conn).Create(ctx, &rbacv1.Role{
		Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "scaler"},
		Rules: []*rbacv1.PolicyRule{
			{Verbs: []string{"patch"}, ApiGroups: []string{"apps"}, Resources: []string{"deployments"}},
			{Verbs: []string{"update"}, ApiGroups: []string{"apps"}, Resources: []string{"deployments/scale"}},
		},
	}); err != nil {
		t.Fatal(err)
	}
	if _, err := client.For[*rbacv1.RoleBinding](s.Conn).Create(ctx, &rbacv1.RoleBinding{
		Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "alice-scales"},
		Subjects: []*rbacv1.Subject{{Kind: "User", ApiGroup: "rbac.authorization.k8s.io", Name: "alice"}},
		RoleRef:  &rbacv1.RoleRef{ApiGroup: "rbac.authorization.k8s.io", Kind: "Role", Name: "scaler"},
	}); err != nil {
		t.Fatal(err)
	}
	hc := s.HTTPClientWith(t, s.Credentials(t, "alice"))
	do := func(method, path, ct, body string) (int, map[string]any) {
		req, _ := http.NewRequest(method, s.URL+path, bytes.NewBufferString(body))
		req.Header.Set("Content-Type", ct)
		resp, err := hc.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		return statusOf(t, resp)
	}
	item := "/apis/apps/v1/namespaces/default/deployments/web"
	deadline := time.Now().Add(5 * time.Second)
	for {
		code, st := do("PATCH", item, "application/merge-patch+json", `{"metadata":{"labels":{"by":"alice"}}}`)
		if code == 200 {
			break
		}
		if code != 403 || time.Now().After(deadline) {
			t.Fatalf("patch with the patch verb: %d %v", code, st)
		}
		time.Sleep(20 * time.Millisecond)
	}
	if code, st := do("PUT", item+"/scale", "application/json", `{"apiVersion":"autoscaling/v1","kind":"Scale","metadata":{"name":"web"},"spec":{"replicas":3}}`); code != 200 {
		t.Fatalf("update of deployments/scale: %d %v", code, st)
	}
	code, st := do("PATCH", item+"/scale", "application/merge-patch+json", `{"spec":{"replicas":4}}`)
	want := `deployments.apps "web" is forbidden: User "alice" cannot patch resource "deployments/scale" in API group "apps" in the namespace "default"`
	if code != 403 || st["message"] != want {
		t.Fatalf("patch of deployments/scale: %d %v\nwant %s", code, st, want)
	}
	code, st = do("DELETE", "/apis/apps/v1/namespaces/default/deployments", "application/json", "")
	if code != 403 || !strings.Contains(st["message"].(string), `cannot deletecollection resource "deployments"`) {
		t.Fatalf("deletecollection: %d %v", code, st)
	}
	code, _ = do("PUT", item, "application/json", `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"}}`)
	if code != 403 {
		t.Fatalf("update without the update verb: %d", code)
	}
}
