package token

import (
	"context"
	"encoding/json"
	"errors"
	"net/http"
	"strings"
	"testing"
	"time"

	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// The kubelet of node-1 asks a real apiserver (TLS, Node and RBAC
// authorization) for the token of its Pod: a token bound to the Pod that
// authenticates as the Pod's account; it may not ask for another node's
// Pod.
func TestAPIRequestsABoundTokenFromTheAPIServer(t *testing.T) {
	api := apiservertest.StartSecure(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	mk := func(name, node string) *corev1.Pod {
		p, err := client.Pods(api.Conn).Create(ctx, &corev1.Pod{
			Metadata: &metav1.ObjectMeta{Name: name, Namespace: "default"},
			Spec:     &corev1.PodSpec{NodeName: node, Containers: []*corev1.Container{{Name: "c", Image: "registry.podline:5000/demo/web:1.0"}}},
		})
		if err != nil {
			t.Fatal(err)
		}
		return p
	}
	mine, theirs := mk("mine", "node-1"), mk("theirs", "node-2")
	tlsCfg, err := api.NodeCredentials("node-1").TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	a := NewAPI(api.URL, tlsCfg)
	req := func(p *corev1.Pod) Request {
		return Request{Namespace: "default", ServiceAccount: "default", PodName: p.GetMetadata().GetName(), PodUID: p.GetMetadata().GetUid(), ExpirationSeconds: 3607}
	}
	var tok Token
	// The Node authorizer learns of the Pod through its cache.
	for deadline := time.Now().Add(5 * time.Second); ; time.Sleep(20 * time.Millisecond) {
		if tok, err = a.RequestToken(ctx, req(mine)); err == nil || time.Now().After(deadline) {
			break
		}
	}
	if err != nil {
		t.Fatal(err)
	}
	if tok.ExpirationSeconds != 3607 || tok.Expiration.Before(time.Now().Add(59*time.Minute)) || strings.Count(tok.Value, ".") != 2 {
		t.Fatalf("token %+v", tok)
	}

	// Who the token is, by the apiserver's own SelfSubjectReview.
	hc := api.HTTPClientWith(t, api.TokenCredentials(tok.Value))
	resp, err := hc.Post(api.URL+"/apis/authentication.k8s.io/v1/selfsubjectreviews", "application/json",
		strings.NewReader(`{"apiVersion":"authentication.k8s.io/v1","kind":"SelfSubjectReview"}`))
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	var review struct {
		Status struct {
			UserInfo struct {
				Username string              `json:"username"`
				Extra    map[string][]string `json:"extra"`
			} `json:"userInfo"`
		} `json:"status"`
	}
	if err := json.NewDecoder(resp.Body).Decode(&review); err != nil || resp.StatusCode != http.StatusCreated {
		t.Fatalf("SelfSubjectReview: %d %v", resp.StatusCode, err)
	}
	ui := review.Status.UserInfo
	if ui.Username != "system:serviceaccount:default:default" || strings.Join(ui.Extra["authentication.kubernetes.io/pod-name"], "") != "mine" ||
		strings.Join(ui.Extra["authentication.kubernetes.io/node-name"], "") != "node-1" {
		t.Fatalf("the token is %+v", ui)
	}

	_, err = a.RequestToken(ctx, req(theirs))
	if !errors.Is(err, ErrRequest) || !strings.Contains(err.Error(), "403") || !strings.Contains(err.Error(), "node requested token bound to a pod scheduled on a different node") {
		t.Fatalf("another node's pod: %v", err)
	}
}
