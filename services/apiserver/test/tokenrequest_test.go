package test

import (
	"testing"
	"time"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

func TestTokenRequest(t *testing.T) {
	s := apiservertest.StartSecure(t)
	ctx := ctxFor(t)
	if _, err := client.For[*corev1.ServiceAccount](s.Conn).Create(ctx, &corev1.ServiceAccount{Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "builder"}}); err != nil {
		t.Fatal(err)
	}
	p := pod("runs-as-builder", nil)
	p.Spec.NodeName, p.Spec.ServiceAccountName = "node-1", "builder"
	if _, err := client.Pods(s.Conn).Create(ctx, p); err != nil {
		t.Fatal(err)
	}
	url := s.URL + "/api/v1/namespaces/default/serviceaccounts/builder/token"
	body := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 3600}}
	admin := s.HTTPClientWith(t, client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"})

	code, tr := restDo(t, admin, "POST", url, body)
	if code != 201 || tr["kind"] != "TokenRequest" {
		t.Fatalf("admin's TokenRequest: %d %v", code, tr)
	}
	st := tr["status"].(map[string]any)
	exp, err := time.Parse(time.RFC3339, st["expirationTimestamp"].(string))
	if err != nil || exp.Before(time.Now().Add(59*time.Minute)) {
		t.Fatalf("expirationTimestamp %v: %v", st["expirationTimestamp"], err)
	}
	// The token authenticates as the account (which may not list pods).
	code, status := restDo(t, s.HTTPClientWith(t, s.TokenCredentials(st["token"].(string))), "GET", s.URL+"/api/v1/namespaces/default/pods", nil)
	if code != 403 || status["message"] != `pods is forbidden: User "system:serviceaccount:default:builder" cannot list resource "pods" in API group "" in the namespace "default"` {
		t.Fatalf("the issued token: %d %v", code, status)
	}

	tests := []struct {
		name     string
		creds    client.Credentials
		url      string
		body     map[string]any
		wantCode int
		wantMsg  string
	}{
		{"the kubelet of the account's pod", s.NodeCredentials("node-1"), url, body, 201, ""},
		{"another node's kubelet", s.NodeCredentials("node-2"), url, body, 403,
			`serviceaccounts "builder" is forbidden: User "system:node:node-2" cannot create resource "serviceaccounts/token" in API group "" in the namespace "default": no relationship found between node 'node-2' and this object`},
		{"a user without a binding", s.Credentials(t, "alice"), url, body, 403, ""},
		{"a missing account", client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"}, s.URL + "/api/v1/namespaces/default/serviceaccounts/ghost/token", body, 404, `serviceaccounts "ghost" not found`},
		{"too short a lifetime", client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"}, url, map[string]any{"spec": map[string]any{"expirationSeconds": 60}}, 422,
			`TokenRequest.authentication.k8s.io "builder" is invalid: spec.expirationSeconds: Invalid value: 60: may not specify a duration less than 10 minutes`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, st := restDo(t, s.HTTPClientWith(t, tt.creds), "POST", tt.url, tt.body)
			// The Node authorizer learns of the Pod through its cache.
			for deadline := time.Now().Add(5 * time.Second); tt.wantCode == 201 && code == 403 && time.Now().Before(deadline); {
				time.Sleep(20 * time.Millisecond)
				code, st = restDo(t, s.HTTPClientWith(t, tt.creds), "POST", tt.url, tt.body)
			}
			if code != tt.wantCode || (tt.wantMsg != "" && st["message"] != tt.wantMsg) {
				t.Fatalf("got %d %v\nwant %d %q", code, st, tt.wantCode, tt.wantMsg)
			}
		})
	}
}
