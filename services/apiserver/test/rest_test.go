package test

import (
	"bufio"
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strings"
	"testing"
	"time"

	"podline.dev/services/apiserver/apiservertest"
)

const podJSON = `{"apiVersion":"v1","kind":"Pod","metadata":{"name":%q,"creationTimestamp":null},
 "spec":{"containers":[{"name":"web","image":"registry.podline:5000/demo/web:1.0","resources":{}}]},"status":{}}`

type restClient struct {
	t    *testing.T
	base string
	http *http.Client
}

func newREST(t *testing.T) (*restClient, *apiservertest.Server) {
	s := apiservertest.Start(t)
	return &restClient{t: t, base: s.URL, http: s.HTTPClient()}, s
}

// do sends a request and returns the status code and decoded JSON body.
func (c *restClient) do(method, path, contentType string, body []byte) (int, map[string]any, http.Header) {
	c.t.Helper()
	req, err := http.NewRequest(method, c.base+path, bytes.NewReader(body))
	if err != nil {
		c.t.Fatal(err)
	}
	if contentType != "" {
		req.Header.Set("Content-Type", contentType)
	}
	resp, err := c.http.Do(req)
	if err != nil {
		c.t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	var out map[string]any
	if len(raw) > 0 && json.Unmarshal(raw, &out) != nil {
		out = map[string]any{"raw": string(raw)}
	}
	return resp.StatusCode, out, resp.Header
}

func (c *restClient) podCount() int {
	c.t.Helper()
	code, list, _ := c.do("GET", "/api/v1/namespaces/default/pods", "", nil)
	if code != 200 {
		c.t.Fatalf("list: %d %v", code, list)
	}
	items, _ := list["items"].([]any)
	return len(items)
}

func TestRESTCreateGetListInKubernetesJSON(t *testing.T) {
	c, _ := newREST(t)
	code, obj, _ := c.do("POST", "/api/v1/namespaces/default/pods", "application/json", []byte(fmt.Sprintf(podJSON, "web")))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, obj)
	}
	md := obj["metadata"].(map[string]any)
	if obj["apiVersion"] != "v1" || obj["kind"] != "Pod" || md["namespace"] != "default" {
		t.Fatalf("object %v", obj)
	}
	if _, err := time.Parse(time.RFC3339, md["creationTimestamp"].(string)); err != nil {
		t.Fatalf("creationTimestamp %v: %v", md["creationTimestamp"], err)
	}
	if _, isString := md["resourceVersion"].(string); !isString {
		t.Fatalf("resourceVersion %v is not a string", md["resourceVersion"])
	}
	if md["generation"] != float64(1) {
		t.Fatalf("generation %v is not the number 1", md["generation"])
	}
	code, list, _ := c.do("GET", "/api/v1/pods", "", nil)
	if code != 200 || list["kind"] != "PodList" || list["apiVersion"] != "v1" {
		t.Fatalf("list: %d %v", code, list)
	}
	if rv := list["metadata"].(map[string]any)["resourceVersion"]; rv == "" || rv == nil {
		t.Fatalf("list has no resourceVersion: %v", list["metadata"])
	}
	code, got, _ := c.do("GET", "/api/v1/namespaces/default/pods/web", "", nil)
	if code != 200 || got["metadata"].(map[string]any)["uid"] != md["uid"] {
		t.Fatalf("get: %d %v", code, got)
	}
}

func TestRESTStaleReplaceIsConflictStatus(t *testing.T) {
	c, _ := newREST(t)
	deploy := `{"apiVersion":"apps/v1","kind":"Deployment","metadata":{"name":"web"},"spec":{"replicas":2,
	  "selector":{"matchLabels":{"app":"web"}},"strategy":{"type":"RollingUpdate","rollingUpdate":{"maxSurge":"25%%","maxUnavailable":"25%%"}},
	  "template":{"metadata":{"labels":{"app":"web"}},"spec":{"containers":[{"name":"web","image":"nginx:1.27"}]}}}%s}`
	code, obj, _ := c.do("POST", "/apis/apps/v1/namespaces/default/deployments", "application/json", []byte(fmt.Sprintf(deploy, "")))
	if code != http.StatusCreated {
		t.Fatalf("create: %d %v", code, obj)
	}
	saved, _ := json.Marshal(obj)
	// Someone scales it: the saved copy is now stale.
	obj["spec"].(map[string]any)["replicas"] = 5
	scaled, _ := json.Marshal(obj)
	if code, body, _ := c.do("PUT", "/apis/apps/v1/namespaces/default/deployments/web", "application/json", scaled); code != 200 {
		t.Fatalf("scale: %d %v", code, body)
	}
	code, status, _ := c.do("PUT", "/apis/apps/v1/namespaces/default/deployments/web", "application/json", saved)
	want := `Operation cannot be fulfilled on deployments.apps "web": the object has been modified; please apply your changes to the latest version and try again`
	if code != http.StatusConflict || status["kind"] != "Status" || status["reason"] != "Conflict" || status["message"] != want {
		t.Fatalf("replace: %d %v", code, status)
	}
	// The status subresource answers at its Kubernetes path.
	if code, body, _ := c.do("GET", "/apis/apps/v1/namespaces/default/deployments/web", "", nil); code != 200 ||
		body["spec"].(map[string]any)["strategy"].(map[string]any)["rollingUpdate"].(map[string]any)["maxSurge"] != "25%" {
		t.Fatalf("get: %d %v", code, body)
	}
	code, body, _ := c.do("PUT", "/apis/apps/v1/namespaces/default/deployments/web/status", "application/json", scaled)
	if code != http.StatusConflict {
		t.Fatalf("stale status update: %d %v", code, body)
	}
}

func TestRESTBadInputIsAStatusAndWritesNothing(t *testing.T) {
	c, _ := newREST(t)
	big := fmt.Sprintf(`{"apiVersion":"v1","kind":"Pod","metadata":{"name":"big","annotations":{"a":%q}},"spec":{"containers":[{"name":"web","image":"x"}]}}`,
		strings.Repeat("x", 1600*1024))
	tests := []struct {
		name   string
		body   string
		code   int
		reason string
		field  string
	}{
		{"malformed JSON", `{"apiVersion":"v1","kind":"Pod","metadata":{`, 400, "BadRequest", ""},
		{"unknown kind", `{"apiVersion":"v1","kind":"Podd","metadata":{"name":"x"}}`, 400, "BadRequest", ""},
		{"name not DNS-1123", fmt.Sprintf(podJSON, "Web_1"), 422, "Invalid", "metadata.name"},
		{"missing required field", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"web"}]}}`, 422, "Invalid", "spec.containers[0].image"},
		{"wrong type", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"web","image":"x","ports":[{"containerPort":"80"}]}]}}`, 400, "BadRequest", "spec.containers[0].ports[0].containerPort"},
		{"unknown field, strict", `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"web","imagee":"x"}]}}`, 400, "BadRequest", "spec.containers[0].imagee"},
		{"body over 1.5 MiB", big, 413, "RequestEntityTooLarge", ""},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			code, status, _ := c.do("POST", "/api/v1/namespaces/default/pods?fieldValidation=Strict", "application/json", []byte(tt.body))
			if code != tt.code || status["kind"] != "Status" || status["reason"] != tt.reason || status["code"] != float64(tt.code) {
				t.Fatalf("got %d %v", code, status)
			}
			if tt.field != "" {
				details, _ := status["details"].(map[string]any)
				causes, _ := details["causes"].([]any)
				found := false
				for _, cause := range causes {
					if cause.(map[string]any)["field"] == tt.field {
						found = true
					}
				}
				if !found {
					t.Fatalf("no cause for %s in %v", tt.field, status)
				}
			}
		})
	}
	if n := c.podCount(); n != 0 {
		t.Fatalf("%d pods written by bad requests", n)
	}
}

func TestRESTUnknownFieldWarnsWhenAskedToWarn(t *testing.T) {
	c, _ := newREST(t)
	body := `{"apiVersion":"v1","kind":"Pod","metadata":{"name":"x"},"spec":{"containers":[{"name":"web","image":"x","imagee":"y"}]}}`
	code, _, header := c.do("POST", "/api/v1/namespaces/default/pods?fieldValidation=Warn", "application/json", []byte(body))
	if code != http.StatusCreated {
		t.Fatalf("create: %d", code)
	}
	if w := header.Get("Warning"); !strings.Contains(w, `unknown field \"spec.containers[0].imagee\"`) {
		t.Fatalf("Warning header %q", w)
	}
}

func TestRESTWatchStreamsNewlineDelimitedEvents(t *testing.T) {
	c, _ := newREST(t)
	_, list, _ := c.do("GET", "/api/v1/namespaces/default/pods", "", nil)
	rv := list["metadata"].(map[string]any)["resourceVersion"].(string)
	resp, err := c.http.Get(c.base + "/api/v1/namespaces/default/pods?watch=1&resourceVersion=" + rv)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	if resp.StatusCode != 200 {
		t.Fatalf("watch: %d", resp.StatusCode)
	}
	for _, name := range []string{"a", "b"} {
		if code, _, _ := c.do("POST", "/api/v1/namespaces/default/pods", "application/json", []byte(fmt.Sprintf(podJSON, name))); code != 201 {
			t.Fatalf("create %s: %d", name, code)
		}
	}
	if code, _, _ := c.do("DELETE", "/api/v1/namespaces/default/pods/a", "", nil); code != 200 {
		t.Fatalf("delete: %d", code)
	}
	sc := bufio.NewScanner(resp.Body)
	want := []struct{ typ, name string }{{"ADDED", "a"}, {"ADDED", "b"}, {"DELETED", "a"}}
	for _, w := range want {
		if !sc.Scan() {
			t.Fatalf("stream ended: %v", sc.Err())
		}
		var ev struct {
			Type   string         `json:"type"`
			Object map[string]any `json:"object"`
		}
		if err := json.Unmarshal(sc.Bytes(), &ev); err != nil {
			t.Fatalf("line %q: %v", sc.Text(), err)
		}
		if ev.Type != w.typ || ev.Object["metadata"].(map[string]any)["name"] != w.name || ev.Object["kind"] != "Pod" {
			t.Fatalf("event %s %v, want %s %s", ev.Type, ev.Object["metadata"], w.typ, w.name)
		}
	}
}

func TestDiscoveryVersionAndHealth(t *testing.T) {
	c, _ := newREST(t)
	code, v1, _ := c.do("GET", "/api/v1", "", nil)
	if code != 200 || v1["kind"] != "APIResourceList" || !strings.Contains(fmt.Sprint(v1["resources"]), "name:pods") {
		t.Fatalf("/api/v1: %d %v", code, v1)
	}
	code, groups, _ := c.do("GET", "/apis", "", nil)
	if code != 200 || !strings.Contains(fmt.Sprint(groups["groups"]), "apps/v1") {
		t.Fatalf("/apis: %d %v", code, groups)
	}
	for _, gv := range []string{"authentication.k8s.io/v1", "authorization.k8s.io/v1"} {
		if !strings.Contains(fmt.Sprint(groups["groups"]), "groupVersion:"+gv) {
			t.Errorf("/apis lacks %s: %v", gv, groups["groups"])
		}
	}
	code, authz, _ := c.do("GET", "/apis/authorization.k8s.io/v1", "", nil)
	if code != 200 || authz["kind"] != "APIResourceList" || !strings.Contains(fmt.Sprint(authz["resources"]), "name:selfsubjectaccessreviews") {
		t.Fatalf("/apis/authorization.k8s.io/v1: %d %v", code, authz)
	}
	if code, v, _ := c.do("GET", "/version", "", nil); code != 200 || v["major"] != "1" {
		t.Fatalf("/version: %d %v", code, v)
	}
	for _, p := range []string{"/healthz", "/livez", "/readyz"} {
		if code, body, _ := c.do("GET", p, "", nil); code != 200 || body["raw"] != "ok" {
			t.Fatalf("%s: %d %v", p, code, body)
		}
	}
	if code, body, _ := c.do("GET", "/api/v1/namespaces/default/nothings", "", nil); code != 404 || body["kind"] != "Status" {
		t.Fatalf("unknown resource: %d %v", code, body)
	}
}
