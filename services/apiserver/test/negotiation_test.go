package test

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"testing"
)

// What a request says it sends and accepts is checked as kube-apiserver
// checks it: client-go's typed clients send protobuf unless told otherwise
// (read through k8sproto)
// and accept JSON after protobuf, and its reflectors try a watch-list first.
func TestRESTContentNegotiation(t *testing.T) {
	c, _ := newREST(t)
	const pods = "/api/v1/namespaces/default/pods"
	tests := []struct {
		name        string
		method      string
		path        string
		contentType string
		accept      string
		body        string
		code        int
		reason      string
		message     string
	}{
		{name: "protobuf Pod is created", method: "POST", path: pods, contentType: "application/vnd.kubernetes.protobuf",
			body: "k8s\x00\n\x09\n\x02v1\x12\x03Pod\x12\x12\n\x04\n\x02pb\x12\n\x12\x08\n\x03web\x12\x01x", code: 201},
		{name: "protobuf with an unknown field number is 400", method: "POST", path: pods, contentType: "application/vnd.kubernetes.protobuf",
			body: "k8s\x00\n\x09\n\x02v1\x12\x03Pod\x12\x02\x48\x01", code: 400, reason: "BadRequest",
			message: "protobuf body: unknown field number 9 in Kubernetes message core.v1.Pod"},
		{name: "YAML body is 415", method: "POST", path: pods, contentType: "application/yaml",
			body: "apiVersion: v1\nkind: Pod\n", code: 415, reason: "UnsupportedMediaType"},
		{name: "protobuf without a kind is 400", method: "DELETE", path: pods + "/web", contentType: "application/vnd.kubernetes.protobuf",
			body: "k8s\x00", code: 400, reason: "BadRequest", message: `protobuf body: no kind "" is registered for version ""`},
		{name: "JSON with a charset is taken", method: "POST", path: pods, contentType: "application/json; charset=utf-8",
			body: fmt.Sprintf(podJSON, "charset"), code: 201},
		{name: "no Content-Type is taken as JSON", method: "POST", path: pods,
			body: fmt.Sprintf(podJSON, "plain"), code: 201},
		{name: "protobuf then JSON is answered in JSON", method: "GET", path: pods,
			accept: "application/vnd.kubernetes.protobuf,application/json", code: 200},
		{name: "kubectl's Table-or-JSON is answered with a Table", method: "GET", path: pods,
			accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json;as=Table;v=v1beta1;g=meta.k8s.io,application/json", code: 200},
		{name: "protobuf only is 406", method: "GET", path: pods, accept: "application/vnd.kubernetes.protobuf",
			code: 406, reason: "NotAcceptable", message: "only the following media types are accepted: application/json"},
		{name: "Table only is answered", method: "GET", path: pods, accept: "application/json;as=Table;v=v1;g=meta.k8s.io", code: 200},
		{name: "v1beta1 Table only is 406", method: "GET", path: pods, accept: "application/json;as=Table;v=v1beta1;g=meta.k8s.io",
			code: 406, reason: "NotAcceptable"},
		{name: "watch-list is refused as without the WatchList feature", method: "GET",
			path:   pods + "?watch=1&sendInitialEvents=true&resourceVersionMatch=NotOlderThan&allowWatchBookmarks=true",
			accept: "application/vnd.kubernetes.protobuf,application/json", code: 422, reason: "Invalid",
			message: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for watch unless the WatchList feature gate is enabled`},
		{name: "sendInitialEvents on a list is refused", method: "GET", path: pods + "?sendInitialEvents=true",
			code: 422, reason: "Invalid", message: `ListOptions.meta.k8s.io "" is invalid: sendInitialEvents: Forbidden: sendInitialEvents is forbidden for list`},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			req, err := http.NewRequest(tt.method, c.base+tt.path, bytes.NewReader([]byte(tt.body)))
			if err != nil {
				t.Fatal(err)
			}
			if tt.contentType != "" {
				req.Header.Set("Content-Type", tt.contentType)
			}
			if tt.accept != "" {
				req.Header.Set("Accept", tt.accept)
			}
			resp, err := c.http.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			defer resp.Body.Close()
			raw, _ := io.ReadAll(resp.Body)
			var body map[string]any
			if err := json.Unmarshal(raw, &body); err != nil {
				t.Fatalf("%d, body is not JSON: %q", resp.StatusCode, raw)
			}
			if resp.StatusCode != tt.code || resp.Header.Get("Content-Type") != "application/json" {
				t.Fatalf("%d %s: %s", resp.StatusCode, resp.Header.Get("Content-Type"), raw)
			}
			if tt.reason == "" {
				return
			}
			if body["kind"] != "Status" || body["reason"] != tt.reason || body["code"] != float64(tt.code) {
				t.Fatalf("status %s", raw)
			}
			if tt.message != "" && body["message"] != tt.message {
				t.Fatalf("message %q, want %q", body["message"], tt.message)
			}
		})
	}
	if n := c.podCount(); n != 3 {
		t.Fatalf("%d pods, want the 2 created with JSON bodies and the 1 with protobuf", n)
	}
}
