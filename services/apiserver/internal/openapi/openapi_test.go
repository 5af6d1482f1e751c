package openapi

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"podline.dev/proto/apis"
)

func build(t *testing.T) *Documents {
	t.Helper()
	d, err := Build("v1.37.0-test")
	if err != nil {
		t.Fatal(err)
	}
	return d
}

// v3 decodes a group-version's document.
func v3(t *testing.T, d *Documents, gv string) v3Document {
	t.Helper()
	raw, _, ok := d.V3(gv)
	if !ok {
		t.Fatalf("no document for %s", gv)
	}
	var doc v3Document
	if err := json.Unmarshal(raw, &doc); err != nil {
		t.Fatal(err)
	}
	return doc
}

func TestIndexNamesEveryGroupVersionWithItsHash(t *testing.T) {
	d := build(t)
	var index struct {
		Paths map[string]struct{ ServerRelativeURL string }
	}
	if err := json.Unmarshal(d.V3Index(), &index); err != nil {
		t.Fatal(err)
	}
	if len(index.Paths) != len(apis.Groups) {
		t.Errorf("index has %d paths, want %d", len(index.Paths), len(apis.Groups))
	}
	for _, g := range apis.Groups {
		key := strings.TrimPrefix(g.PathPrefix(), "/")
		_, hash, ok := d.V3(key)
		if !ok || index.Paths[key].ServerRelativeURL != "/openapi/v3/"+key+"?hash="+hash {
			t.Errorf("%s: index entry %q, document found %v", key, index.Paths[key].ServerRelativeURL, ok)
		}
	}
}

// kubectl explain finds a kind's schema by x-kubernetes-group-version-kind
// and follows $refs; nothing may dangle.
func TestEveryKindHasASchemaAndNoRefDangles(t *testing.T) {
	d := build(t)
	for _, g := range apis.Groups {
		doc := v3(t, d, strings.TrimPrefix(g.PathPrefix(), "/"))
		for _, r := range apis.InGroup(g) {
			found := false
			for _, s := range doc.Components.Schemas {
				if slices.Contains(s.GroupVersionKind, GVK{Group: g.Name, Version: g.Version, Kind: r.Kind}) {
					found = s.Properties["metadata"] != nil && s.Properties["apiVersion"].Type == "string"
				}
			}
			if !found {
				t.Errorf("%s/%s: no schema with its group-version-kind, metadata and apiVersion", g.GroupVersion(), r.Kind)
			}
		}
		raw, _, _ := d.V3(strings.TrimPrefix(g.PathPrefix(), "/"))
		checkRefs(t, g.GroupVersion(), string(raw), "#/components/schemas/", doc.Components.Schemas)
	}
	var v2 v2Document
	if err := json.Unmarshal(d.V2(), &v2); err != nil {
		t.Fatal(err)
	}
	if v2.Swagger != "2.0" || v2.Definitions["io.k8s.api.apps.v1.Deployment"] == nil {
		t.Errorf("v2 document: swagger %q, Deployment defined: %v", v2.Swagger, v2.Definitions["io.k8s.api.apps.v1.Deployment"] != nil)
	}
	checkRefs(t, "v2", string(d.V2()), "#/definitions/", v2.Definitions)
	if q := v2.Definitions["io.k8s.apimachinery.pkg.api.resource.Quantity"]; q.Type != "string" || q.OneOf != nil {
		t.Errorf("v2 Quantity %+v, want a string (Swagger 2.0 has no oneOf)", q)
	}
}

func checkRefs(t *testing.T, doc, raw, prefix string, defs map[string]*Schema) {
	t.Helper()
	for _, part := range strings.Split(raw, `"$ref":"`)[1:] {
		ref := part[:strings.IndexByte(part, '"')]
		if !strings.HasPrefix(ref, prefix) || defs[strings.TrimPrefix(ref, prefix)] == nil {
			t.Errorf("%s: dangling $ref %s", doc, ref)
		}
	}
}

func TestSchemasSpeakKubernetesJSON(t *testing.T) {
	defs := v3(t, build(t), "api/v1").Components.Schemas
	ref := func(name string) string { return "#/components/schemas/" + name }
	tests := []struct {
		name string
		got  any
		want any
	}{
		{"containers merge by name", ext(defs["io.k8s.api.core.v1.PodSpec"].Properties["containers"]), "merge name map [name]"},
		{"volumes retain keys", ext(defs["io.k8s.api.core.v1.PodSpec"].Properties["volumes"]), "merge,retainKeys name map [name]"},
		{"ports merge by containerPort", ext(defs["io.k8s.api.core.v1.Container"].Properties["ports"]), "merge containerPort map [containerPort protocol]"},
		{"env merge by name", ext(defs["io.k8s.api.core.v1.Container"].Properties["env"]), "merge name map [name]"},
		{"pod conditions merge by type", ext(defs["io.k8s.api.core.v1.PodStatus"].Properties["conditions"]), "merge type map [type]"},
		{"tolerations are atomic", ext(defs["io.k8s.api.core.v1.PodSpec"].Properties["tolerations"]), "  atomic []"},
		{"containers are Containers", defs["io.k8s.api.core.v1.PodSpec"].Properties["containers"].Items.Ref, ref("io.k8s.api.core.v1.Container")},
		{"JSON names", defs["io.k8s.api.core.v1.PodStatus"].Properties["podIPs"] != nil && defs["io.k8s.api.core.v1.PodSpec"].Properties["hostPID"] != nil, true},
		{"times are date-time", defs["io.k8s.apimachinery.pkg.apis.meta.v1.Time"].Format, "date-time"},
		{"creationTimestamp is a Time", defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].Properties["creationTimestamp"].AllOf[0].Ref, ref("io.k8s.apimachinery.pkg.apis.meta.v1.Time")},
		{"a described reference is wrapped in allOf", defs["io.k8s.api.core.v1.Container"].Properties["resources"].Description != "" &&
			defs["io.k8s.api.core.v1.Container"].Properties["resources"].Ref == "", true},
		{"an array's items refer plainly", defs["io.k8s.api.core.v1.PodList"].Properties["items"].Items.Ref, ref("io.k8s.api.core.v1.Pod")},
		{"ports are int-or-string", defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"].Format, "int-or-string"},
		{"int-or-string is either", oneOf(defs["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]), "[integer string]"},
		{"quantities are strings or numbers", oneOf(defs["io.k8s.apimachinery.pkg.api.resource.Quantity"]), "[string number]"},
		{"requests are Quantities", defs["io.k8s.api.core.v1.ResourceRequirements"].Properties["requests"].AdditionalProperties.Ref, ref("io.k8s.apimachinery.pkg.api.resource.Quantity")},
		{"labels are a string map", defs["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].Properties["labels"].AdditionalProperties.Type, "string"},
		{"secret data is bytes", defs["io.k8s.api.core.v1.Secret"].Properties["data"].AdditionalProperties.Format, "byte"},
		{"int64 fields", defs["io.k8s.api.core.v1.PodSpec"].Properties["terminationGracePeriodSeconds"].Format, "int64"},
		{"container name required", defs["io.k8s.api.core.v1.Container"].Required, []string{"name"}},
		{"list kinds", defs["io.k8s.api.core.v1.PodList"].GroupVersionKind, []GVK{{Group: "", Version: "v1", Kind: "PodList"}}},
	}
	for _, tt := range tests {
		if fmt.Sprint(tt.got) != fmt.Sprint(tt.want) {
			t.Errorf("%s: got %v, want %v", tt.name, tt.got, tt.want)
		}
	}
}

func oneOf(s *Schema) string {
	var types []string
	for _, o := range s.OneOf {
		types = append(types, o.Type)
	}
	return fmt.Sprint(types)
}

func ext(s *Schema) string {
	return fmt.Sprintf("%s %s %s %v", s.PatchStrategy, s.PatchMergeKey, s.ListType, s.ListMapKeys)
}

// kubectl sends fieldValidation=Strict (server-side validation) only when
// the PATCH operation of the kind lists that query parameter.
func TestPatchOperationsOfferFieldValidation(t *testing.T) {
	d := build(t)
	for _, r := range apis.Resources {
		doc := v3(t, d, strings.TrimPrefix(r.Group.PathPrefix(), "/"))
		path := r.Group.PathPrefix() + "/" + r.Name + "/{name}"
		if r.Namespaced {
			path = r.Group.PathPrefix() + "/namespaces/{namespace}/" + r.Name + "/{name}"
		}
		item := doc.Paths[path]
		if item == nil || item.Patch == nil {
			t.Errorf("%s: no PATCH at %s", r.Kind, path)
			continue
		}
		if item.Patch.GVK.Kind != r.Kind || item.Patch.Action != "patch" {
			t.Errorf("%s: PATCH says %+v %s", r.Kind, item.Patch.GVK, item.Patch.Action)
		}
		if !slices.ContainsFunc(item.Patch.Parameters, func(p parameter) bool { return p.Name == "fieldValidation" && p.In == "query" }) {
			t.Errorf("%s: PATCH has no fieldValidation query parameter", r.Kind)
		}
		if _, ok := item.Patch.RequestBody.Content["application/strategic-merge-patch+json"]; !ok {
			t.Errorf("%s: PATCH does not take strategic merge patches", r.Kind)
		}
	}
}

// kubectl scale finds the Scale kind in discovery; OpenAPI describes the
// subresource too, as autoscaling/v1 Scale.
func TestScaleSubresourceIsAutoscalingScale(t *testing.T) {
	doc := v3(t, build(t), "apis/apps/v1")
	item := doc.Paths["/apis/apps/v1/namespaces/{namespace}/deployments/{name}/scale"]
	if item == nil || item.Patch == nil || item.Get == nil {
		t.Fatal("no deployments/scale operations")
	}
	if item.Get.GVK != (GVK{Group: "autoscaling", Version: "v1", Kind: "Scale"}) || item.Get.OperationID != "readAppsV1NamespacedDeploymentScale" {
		t.Errorf("scale GET: %+v %s", item.Get.GVK, item.Get.OperationID)
	}
	if s := doc.Components.Schemas["io.k8s.api.autoscaling.v1.Scale"]; s == nil || s.Properties["spec"] == nil || len(s.GroupVersionKind) != 1 || s.GroupVersionKind[0].Kind != "Scale" {
		t.Errorf("Scale schema %+v", s)
	}
}

func TestOperationIDsReadAsKubernetes(t *testing.T) {
	doc := v3(t, build(t), "apis/rbac.authorization.k8s.io/v1")
	got := doc.Paths["/apis/rbac.authorization.k8s.io/v1/namespaces/{namespace}/rolebindings"].Get.OperationID
	if got != "listRbacAuthorizationV1NamespacedRoleBinding" {
		t.Errorf("operationId %q", got)
	}
	if got := doc.Paths["/apis/rbac.authorization.k8s.io/v1/rolebindings"].Get.OperationID; got != "listRbacAuthorizationV1RoleBindingForAllNamespaces" {
		t.Errorf("operationId %q", got)
	}
	if del := doc.Paths["/apis/rbac.authorization.k8s.io/v1/clusterroles"].Delete; del == nil || del.Action != "deletecollection" ||
		del.OperationID != "deleteCollectionRbacAuthorizationV1ClusterRole" {
		t.Errorf("clusterroles DELETE %+v", del)
	}
}

// kubectl explain prints each field's description; they come from the
// comments in proto/*/v1/types.proto.
func TestKubectlExplainFindsDescriptions(t *testing.T) {
	defs := v3(t, build(t), "api/v1").Components.Schemas
	container := defs["io.k8s.api.core.v1.Container"]
	for _, p := range []string{"image", "ports", "env", "resources", "livenessProbe"} {
		if container.Properties[p] == nil || container.Properties[p].Description == "" {
			t.Errorf("Container.%s has no description", p)
		}
	}
	for _, def := range []string{"io.k8s.api.core.v1.Pod", "io.k8s.api.core.v1.PodSpec", "io.k8s.api.core.v1.Container", "io.k8s.api.core.v1.Endpoints"} {
		if defs[def].Description == "" {
			t.Errorf("%s has no description", def)
		}
	}
	for name, p := range defs["io.k8s.api.core.v1.PodSpec"].Properties {
		if p.Description == "" {
			t.Errorf("PodSpec.%s has no description", name)
		}
	}
}

// Every kind a user writes or reads, its list, and everything under them,
// is described: each definition and each of its properties.
func TestEveryKindIsDescribedAllTheWayDown(t *testing.T) {
	d := build(t)
	for _, g := range apis.Groups {
		doc := v3(t, d, strings.TrimPrefix(g.PathPrefix(), "/"))
		for name, def := range doc.Components.Schemas {
			if def.Description == "" {
				t.Errorf("%s: %s has no description", g.GroupVersion(), name)
			}
			for p, s := range def.Properties {
				if s.Description == "" {
					t.Errorf("%s: %s.%s has no description", g.GroupVersion(), name, p)
				}
			}
		}
	}
}
