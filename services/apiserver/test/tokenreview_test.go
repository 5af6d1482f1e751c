package test

import (
	"slices"
	"strings"
	"testing"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/client"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/apiserver/internal/authn"
)

// TestTokenReview: a kubelet asks who a Pod's bound token is; a user
// needs system:auth-delegator to ask; the token is void once its Pod is
// deleted.
func TestTokenReview(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	admin := s.HTTPClientWith(t, client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"})
	p := pod("reviewed", nil)
	p.Spec.NodeName = "node-1"
	created, err := client.Pods(s.Conn).Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	code, tr := restDo(t, admin, "POST", s.URL+"/api/v1/namespaces/default/serviceaccounts/default/token", map[string]any{
		"spec": map[string]any{"boundObjectRef": map[string]any{"apiVersion": "v1", "kind": "Pod", "name": "reviewed", "uid": created.GetMetadata().GetUid()}}})
	if code != 201 {
		t.Fatalf("TokenRequest: %d %v", code, tr)
	}
	token := tr["status"].(map[string]any)["token"].(string)
	url := s.URL + "/apis/authentication.k8s.io/v1/tokenreviews"
	review := func(token string, audiences ...string) map[string]any {
		spec := map[string]any{"token": token}
		if len(audiences) > 0 {
			spec["audiences"] = audiences
		}
		return map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenReview", "spec": spec}
	}
	kubelet := s.HTTPClientWith(t, s.NodeCredentials("node-1"))

	code, got := restDo(t, kubelet, "POST", url, review(token))
	if code != 201 || got["kind"] != "TokenReview" || got["apiVersion"] != "authentication.k8s.io/v1" {
		t.Fatalf("kubelet's TokenReview: %d %v", code, got)
	}
	st := got["status"].(map[string]any)
	user, _ := st["user"].(map[string]any)
	if st["authenticated"] != true || user["username"] != "system:serviceaccount:default:default" || user["uid"] == "" {
		t.Fatalf("status = %v", st)
	}
	groups := strings.Split(stringsOf(user["groups"]), ",")
	for _, g := range []string{"system:serviceaccounts", "system:serviceaccounts:default", "system:authenticated"} {
		if !slices.Contains(groups, g) {
			t.Fatalf("groups %v lack %s", groups, g)
		}
	}
	extra, _ := user["extra"].(map[string]any)
	if stringsOf(extra[authn.ExtraPodName]) != "reviewed" || stringsOf(extra[authn.ExtraPodUID]) != created.GetMetadata().GetUid() || stringsOf(extra[authn.ExtraNodeName]) != "node-1" {
		t.Fatalf("extra = %v", extra)
	}
	if stringsOf(st["audiences"]) != authn.DefaultIssuer {
		t.Fatalf("audiences = %v", st["audiences"])
	}

	tests := []struct {
		name     string
		body     map[string]any
		wantCode int
		wantAuth bool
		wantErr  string
	}{
		{"an audience the token is not for", review(token, "vault"), 201, false, "invalid bearer token"},
		{"the apiserver's audience named", review(token, authn.DefaultIssuer, "vault"), 201, true, ""},
		{"a token nobody issued", review("not-a-token"), 201, false, ""},
		{"no token", review(""), 400, false, "token is required for TokenReview in authentication"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, got := restDo(t, kubelet, "POST", url, tt.body)
			if code != tt.wantCode {
				t.Fatalf("got %d %v", code, got)
			}
			if code != 201 {
				if !strings.Contains(got["message"].(string), tt.wantErr) {
					t.Fatalf("message %q, want %q", got["message"], tt.wantErr)
				}
				return
			}
			st := got["status"].(map[string]any)
			errText, _ := st["error"].(string)
			if (st["authenticated"] == true) != tt.wantAuth || !strings.Contains(errText, tt.wantErr) || (tt.wantErr == "" && errText != "") {
				t.Fatalf("status = %v", st)
			}
		})
	}

	// A user may review tokens once bound to system:auth-delegator.
	alice := s.HTTPClientWith(t, s.Credentials(t, "alice"))
	code, got = restDo(t, alice, "POST", url, review(token))
	if want := `tokenreviews.authentication.k8s.io is forbidden: User "alice" cannot create resource "tokenreviews" in API group "authentication.k8s.io" at the cluster scope`; code != 403 || got["message"] != want {
		t.Fatalf("alice without a binding: %d %v\nwant %s", code, got, want)
	}
	if _, err := client.For[*rbacv1.ClusterRoleBinding](s.Conn).Create(ctx, &rbacv1.ClusterRoleBinding{
		Metadata: &metav1.ObjectMeta{Name: "alice-delegates"},
		RoleRef:  &rbacv1.RoleRef{ApiGroup: "rbac.authorization.k8s.io", Kind: "ClusterRole", Name: "system:auth-delegator"},
		Subjects: []*rbacv1.Subject{{Kind: "User", ApiGroup: "rbac.authorization.k8s.io", Name: "alice"}},
	}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		code, got = restDo(t, alice, "POST", url, review(token))
		return code == 201
	}, "alice bound to system:auth-delegator reviews tokens: %d %v", &code, &got)

	// The token is bound to its Pod: gone, the Pod takes it along.
	if _, err := client.Pods(s.Conn).Delete(ctx, "default", "reviewed", &metav1.DeleteOptions{GracePeriodSeconds: proto.Int64(0)}); err != nil {
		t.Fatal(err)
	}
	eventually(t, func() bool {
		code, got = restDo(t, kubelet, "POST", url, review(token))
		st, _ := got["status"].(map[string]any)
		errText, _ := st["error"].(string)
		return code == 201 && st["authenticated"] != true && strings.Contains(errText, "service account token has been invalidated")
	}, "the token of a deleted pod: %d %v", &code, &got)
}

// stringsOf joins a JSON array of strings with commas (a string stays itself).
func stringsOf(v any) string {
	switch v := v.(type) {
	case string:
		return v
	case []any:
		var out []string
		for _, e := range v {
			s, _ := e.(string)
			out = append(out, s)
		}
		return strings.Join(out, ",")
	}
	return ""
}

// eventually polls cond for up to 5 s, then fails with msg and the last
// code and body.
func eventually(t *testing.T, cond func() bool, msg string, code *int, body *map[string]any) {
	t.Helper()
	for deadline := time.Now().Add(5 * time.Second); !cond(); time.Sleep(20 * time.Millisecond) {
		if time.Now().After(deadline) {
			t.Fatalf(msg, *code, *body)
		}
	}
}
