package test

import (
	"encoding/json"
	"net/http"
	"testing"

	"podline.dev/pkg/client"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// kubectl asks /api and /apis for aggregated discovery first; with it,
// api-resources, short names and `kubectl get all` need two requests.
func TestAggregatedDiscoveryAsKubectlAsksForIt(t *testing.T) {
	c, _ := newREST(t)
	const accept = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json"
	type resource struct {
		Resource     string
		ResponseKind struct{ Group, Version, Kind string }
		Scope        string
		Verbs        []string
		ShortNames   []string
		Categories   []string
		Subresources []struct {
			Subresource  string
			ResponseKind struct{ Group, Version, Kind string }
		}
	}
	get := func(path string) map[string]resource {
		req, _ := http.NewRequest("GET", c.base+path, nil)
		req.Header.Set("Accept", accept)
		resp, err := c.http.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		if ct := resp.Header.Get("Content-Type"); ct != "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList" {
			t.Fatalf("%s: Content-Type %q", path, ct)
		}
		var list struct {
			Kind, APIVersion string
			Items            []struct {
				Metadata struct{ Name string }
				Versions []struct {
					Version   string
					Resources []resource
				}
			}
		}
		if err := json.NewDecoder(resp.Body).Decode(&list); err != nil {
			t.Fatal(err)
		}
		if list.Kind != "APIGroupDiscoveryList" || list.APIVersion != "apidiscovery.k8s.io/v2" {
			t.Fatalf("%s: %s %s", path, list.APIVersion, list.Kind)
		}
		out := map[string]resource{}
		for _, g := range list.Items {
			for _, v := range g.Versions {
				for _, r := range v.Resources {
					out[g.Metadata.Name+"/"+r.Resource] = r
				}
			}
		}
		return out
	}
	core, named := get("/api"), get("/apis")
	pods := core["/pods"]
	if pods.ResponseKind.Kind != "Pod" || pods.Scope != "Namespaced" || len(pods.ShortNames) != 1 || pods.ShortNames[0] != "po" ||
		len(pods.Categories) != 1 || pods.Categories[0] != "all" {
		t.Errorf("pods: %+v", pods)
	}
	subs := map[string]bool{}
	for _, s := range pods.Subresources {
		subs[s.Subresource] = true
	}
	if !subs["status"] || !subs["binding"] {
		t.Errorf("pods subresources %+v", pods.Subresources)
	}
	if ns := core["/namespaces"]; ns.Scope != "Cluster" || ns.ShortNames[0] != "ns" {
		t.Errorf("namespaces: %+v", ns)
	}
	deploy := named["apps/deployments"]
	if deploy.ResponseKind.Group != "apps" || deploy.ShortNames[0] != "deploy" || deploy.Categories[0] != "all" {
		t.Errorf("deployments: %+v", deploy)
	}
	if _, ok := named["rbac.authorization.k8s.io/clusterroles"]; !ok || len(core) == 0 || named["/pods"].Resource != "" {
		t.Errorf("/apis holds %d resources, /api %d", len(named), len(core))
	}
	// The review resources are questions answered on create: listed with
	// that verb alone, in their groups, as `kubectl api-resources` shows.
	for _, name := range []string{"authentication.k8s.io/selfsubjectreviews", "authentication.k8s.io/tokenreviews",
		"authorization.k8s.io/selfsubjectaccessreviews", "authorization.k8s.io/selfsubjectrulesreviews", "authorization.k8s.io/subjectaccessreviews"} {
		r, ok := named[name]
		if !ok || r.Scope != "Cluster" || len(r.Verbs) != 1 || r.Verbs[0] != "create" {
			t.Errorf("%s: %+v (listed: %v)", name, r, ok)
		}
	}
	// Without the aggregated media type the legacy document answers.
	if code, legacy, _ := c.do("GET", "/api", "", nil); code != 200 || legacy["kind"] != "APIVersions" {
		t.Errorf("legacy /api: %d %v", code, legacy)
	}
}

// Every resource of the table is served under its generated gRPC service
// and its REST path, the collection listed as <Kind>List either way.
func TestEveryResourceListsOverGRPCAndREST(t *testing.T) {
	c, s := newREST(t)
	ctx := ctxFor(t)
	for _, res := range apis.Resources {
		path, ns := res.Group.PathPrefix()+"/"+res.Name, ""
		if res.Namespaced {
			path, ns = res.Group.PathPrefix()+"/namespaces/default/"+res.Name, "default"
		}
		code, body, _ := c.do("GET", path, "", nil)
		if code != http.StatusOK || body["kind"] != res.Kind+"List" {
			t.Errorf("GET %s: %d, kind %v", path, code, body["kind"])
		}
		dyn, err := client.ForResource(s.Conn, res)
		if err != nil {
			t.Fatal(err)
		}
		if _, _, err := dyn.List(ctx, &metav1.ListRequest{Namespace: ns}); err != nil {
			t.Errorf("gRPC %s List: %v", res.Service(), err)
		}
	}
}
