package server

import (
	"net/http"
	"testing"

	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
	"podline.dev/services/apiserver/apiservertest"
)

// The Webhook mode against a real apiserver with the bootstrap policy: the
// kubelet of node-1 asks with its own client certificate, and serves the
// apiserver's kubelet client identity (kubeadm's binding to
// system:kubelet-api-admin) but no one the policy does not grant
// nodes/proxy.
func TestWebhookAuthorizationAsksTheAPIServer(t *testing.T) {
	api := apiservertest.StartSecure(t)
	dir := api.PKI
	reviews := NewSubjectAccessReviews(api.URL, tlsFor(t, dir, pki.KubeletCertName(testNode)))
	url, _, _ := setupWith(t, kubeletConfig(t, dir, NewCachedAuthorizer(reviews, clock.Real{}, DefaultAllowedTTL, DefaultDeniedTTL)))

	apiserver := httpClient(tlsFor(t, dir, "apiserver-kubelet-client"))
	if code, body := get(t, apiserver, url+"/containerLogs/default/web/c?tailLines=1"); code != 200 || body != "line 3\n" {
		t.Fatalf("the apiserver's kubelet client: %d %q", code, body)
	}
	aliceTLS, err := api.Credentials(t, "alice", "devs").TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	hc := httpClient(aliceTLS)
	if code, body := get(t, hc, url+"/containerLogs/default/web/c"); code != http.StatusForbidden ||
		body != "Forbidden (user=alice, verb=get, resource=nodes, subresource(s)=[proxy])\n" {
		t.Fatalf("alice: %d %q", code, body)
	}
	// Another node's kubelet has no business with this one's containers.
	other := httpClient(tlsFor(t, dir, pki.KubeletCertName("node-2")))
	if code, body := get(t, other, url+"/containerLogs/default/web/c"); code != http.StatusForbidden ||
		body != "Forbidden (user=system:node:node-2, verb=get, resource=nodes, subresource(s)=[proxy])\n" {
		t.Fatalf("node-2's kubelet: %d %q", code, body)
	}
	if code, _ := get(t, httpClient(tlsFor(t, dir, "")), url+"/containerLogs/default/web/c"); code != http.StatusUnauthorized {
		t.Fatalf("anonymous: %d", code)
	}
}
