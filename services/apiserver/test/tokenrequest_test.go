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
	created, err := client.Pods(s.Conn).Create(ctx, p)
	if err != nil {
		t.Fatal(err)
	}
	url := s.URL + "/api/v1/namespaces/default/serviceaccounts/builder/token"
	body := map[string]any{"apiVersion": "authentication.k8s.io/v1", "kind": "TokenRequest", "spec": map[string]any{"expirationSeconds": 3600}}
	bound := func(name, uid string) map[string]any {
		return map[string]any{"spec": map[string]any{"expirationSeconds": 3607,
			"boundObjectRef": map[string]any{"apiVersion": "v1", "kind": "Pod", "name": name, "uid": uid}}}
	}
	podUID := created.GetMetadata().GetUid()
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
		{"the kubelet of the account's pod, bound to it", s.NodeCredentials("node-1"), url, bound("runs-as-builder", podUID), 201, ""},
		{"the kubelet, a token bound to nothing", s.NodeCredentials("node-1"), url, body, 403,
			`serviceaccounts "builder" is forbidden: node requested token not bound to a pod`},
		{"the kubelet, a binding without the pod's uid", s.NodeCredentials("node-1"), url, bound("runs-as-builder", ""), 403,
			`serviceaccounts "builder" is forbidden: node requested token with a pod binding without a uid`},
		{"the kubelet, a pod recreated since", s.NodeCredentials("node-1"), url, bound("runs-as-builder", "old-uid"), 403,
			`serviceaccounts "builder" is forbidden: the UID in the bound object reference (old-uid) does not match the UID in record. The object might have been deleted and then recreated`},
		{"another node's kubelet", s.NodeCredentials("node-2"), url, bound("runs-as-builder", podUID), 403,
			`serviceaccounts "builder" is forbidden: User "system:node:node-2" cannot create resource "serviceaccounts/token" in API group "" in the namespace "default": no relationship found between node 'node-2' and this object`},
		{"bound to a pod of another account", client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"}, s.URL + "/api/v1/namespaces/default/serviceaccounts/default/token", bound("runs-as-builder", ""), 400,
			`cannot bind token for serviceaccount "default" to pod running with different serviceaccount name.`},
		{"bound to a missing pod", client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"}, url, bound("ghost", ""), 404, `pods "ghost" not found`},
		{"bound to a kind that cannot be bound", client.Credentials{Kubeconfig: s.PKI + "/kubeconfig"}, url,
			map[string]any{"spec": map[string]any{"boundObjectRef": map[string]any{"apiVersion": "apps/v1", "kind": "Deployment", "name": "web"}}}, 400,
			`cannot bind token to object of type apps/v1, Kind=Deployment`},
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
