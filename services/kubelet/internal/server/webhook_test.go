package server

import (
	"context"
	"net"
	"net/http"
	"strconv"
	"strings"
	"testing"

	"github.com/gorilla/websocket"

	"podline.dev/pkg/client"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/pki"
	"podline.dev/pkg/secureserving"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/apiservertest"
	"podline.dev/services/kubelet/internal/runtime"
)

// The Webhook mode against a real apiserver with the bootstrap policy: the
// kubelet of node-1 asks with its own client certificate, and serves the
// apiserver's kubelet client identity (kubeadm's binding to
// system:kubelet-api-admin) but no one the policy does not grant
// nodes/proxy.
func TestWebhookAuthorizationAsksTheAPIServer(t *testing.T) {
	api := apiservertest.StartSecure(t)
	dir := api.PKI
	reviews := secureserving.NewSubjectAccessReviews(api.URL, secureserving.HTTPClient(tlsFor(t, dir, pki.KubeletCertName(testNode))))
	url, _, _ := setupWith(t, kubeletConfig(t, dir, secureserving.NewCachedAuthorizer(reviews, clock.Real{}, DefaultAllowedTTL, DefaultDeniedTTL)))

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

// The whole relay with real parts: kubectl's requests reach the apiserver,
// which dials node-1's kubelet server over TLS at the node's Hostname as
// kube-apiserver-kubelet-client; the kubelet verifies that certificate,
// asks the apiserver whether the user may use nodes/node-1/proxy, and
// serves the logs, and exec over the WebSocket channel protocol.
func TestLogsAndExecThroughTheAPIServer(t *testing.T) {
	api := apiservertest.StartSecure(t)
	dir := api.PKI
	reviews := secureserving.NewSubjectAccessReviews(api.URL, secureserving.HTTPClient(tlsFor(t, dir, pki.KubeletCertName(testNode))))
	url, rt, _ := setupWith(t, kubeletConfig(t, dir, secureserving.NewCachedAuthorizer(reviews, clock.Real{}, DefaultAllowedTTL, DefaultDeniedTTL)))
	rt.SetExecFunc(func(c *runtime.Container, cmd []string) (*runtime.ExecResult, error) {
		return &runtime.ExecResult{Stdout: []byte(strings.Join(cmd, " "))}, nil
	})
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(url, "https://"))
	portNum, _ := strconv.Atoi(port)

	ctx := context.Background()
	nodes := client.Nodes(api.Conn)
	n, err := nodes.Create(ctx, &corev1.Node{Metadata: &metav1.ObjectMeta{Name: testNode}})
	if err != nil {
		t.Fatal(err)
	}
	n.Status = &corev1.NodeStatus{
		Addresses:       []*corev1.NodeAddress{{Type: "Hostname", Address: "localhost"}},
		DaemonEndpoints: &corev1.NodeDaemonEndpoints{KubeletEndpoint: &corev1.DaemonEndpoint{Port: int32(portNum)}},
	}
	if _, err := nodes.UpdateStatus(ctx, n); err != nil {
		t.Fatal(err)
	}
	if _, err := client.Pods(api.Conn).Create(ctx, &corev1.Pod{
		Metadata: &metav1.ObjectMeta{Name: "web", Namespace: "default"},
		Spec:     &corev1.PodSpec{NodeName: testNode, Containers: []*corev1.Container{{Name: "c", Image: "registry.podline:5000/demo/web:1.0"}}},
	}); err != nil {
		t.Fatal(err)
	}

	adminTLS, err := api.Credentials(t, "root", "system:masters").TLSConfig()
	if err != nil {
		t.Fatal(err)
	}
	if code, body := get(t, httpClient(adminTLS), api.URL+"/api/v1/namespaces/default/pods/web/log?tailLines=1"); code != 200 || body != "line 3\n" {
		t.Fatalf("kubectl logs: %d %q", code, body)
	}
	d := websocket.Dialer{Subprotocols: []string{ProtocolV5}, TLSClientConfig: adminTLS}
	conn, _, err := d.Dial("wss"+strings.TrimPrefix(api.URL, "https")+"/api/v1/namespaces/default/pods/web/exec?command=echo&command=hi&stdout=1", nil)
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close()
	streams := map[byte]string{}
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			break
		}
		streams[msg[0]] += string(msg[1:])
	}
	if streams[streamStdout] != "echo hi" || !strings.Contains(streams[streamError], `"status":"Success"`) {
		t.Fatalf("kubectl exec: %q", streams)
	}
}
