package test

import (
	"encoding/json"
	"io"
	"net/http"
	"testing"
)

// kubectl explain reads /openapi/v3, follows the group-version's
// serverRelativeURL and finds the kind's schema there.
func TestOpenAPIV3AsKubectlReadsIt(t *testing.T) {
	c, _ := newREST(t)
	code, index, _ := c.do("GET", "/openapi/v3", "", nil)
	if code != 200 {
		t.Fatalf("/openapi/v3: %d %v", code, index)
	}
	url, _ := index["paths"].(map[string]any)["apis/apps/v1"].(map[string]any)["serverRelativeURL"].(string)
	resp, err := c.http.Get(c.base + url)
	if err != nil {
		t.Fatal(err)
	}
	defer resp.Body.Close()
	raw, _ := io.ReadAll(resp.Body)
	if resp.StatusCode != 200 || resp.Header.Get("Cache-Control") != "public, immutable, max-age=31536000" {
		t.Fatalf("%s: %d, Cache-Control %q", url, resp.StatusCode, resp.Header.Get("Cache-Control"))
	}
	var doc struct {
		Components struct {
			Schemas map[string]struct {
				Properties map[string]any
				GVK        []map[string]string `json:"x-kubernetes-group-version-kind"`
			}
		}
	}
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	dep := doc.Components.Schemas["io.k8s.api.apps.v1.Deployment"]
	if len(dep.GVK) != 1 || dep.GVK[0]["kind"] != "Deployment" || dep.GVK[0]["group"] != "apps" || dep.Properties["spec"] == nil {
		t.Errorf("Deployment schema %+v", dep)
	}
	if code, body, _ := c.do("GET", "/openapi/v3/apis/nothing/v1", "", nil); code != 404 || body["kind"] != "Status" {
		t.Errorf("unknown group-version: %d %v", code, body)
	}
}

// kubectl asks for /openapi/v2 in protobuf only: 406 tells it to go without.
func TestOpenAPIV2IsJSONOrNotAcceptable(t *testing.T) {
	c, _ := newREST(t)
	for accept, want := range map[string]int{
		"application/com.github.proto-openapi.spec.v2@v1.0+protobuf": 406,
		"application/json": 200,
		"":                 200,
	} {
		req, _ := http.NewRequest("GET", c.base+"/openapi/v2", nil)
		if accept != "" {
			req.Header.Set("Accept", accept)
		}
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		var body map[string]any
		_ = json.NewDecoder(resp.Body).Decode(&body)
		resp.Body.Close()
		if resp.StatusCode != want {
			t.Errorf("Accept %q: %d, want %d", accept, resp.StatusCode, want)
		}
		if want == 200 && (body["swagger"] != "2.0" || body["definitions"] == nil) {
			t.Errorf("Accept %q: body is not a Swagger 2.0 document", accept)
		}
		if want == 406 && body["reason"] != "NotAcceptable" {
			t.Errorf("Accept %q: %v", accept, body)
		}
	}
}
