package rest

import (
	"encoding/json"
	"net/http"
	"runtime"

	"podline.dev/proto/apis"
)

// Discovery documents, shaped as Kubernetes' meta/v1 APIVersions,
// APIGroupList and APIResourceList.

type groupVersionForDiscovery struct {
	GroupVersion string `json:"groupVersion"`
	Version      string `json:"version"`
}

type apiGroup struct {
	Name             string                     `json:"name"`
	Versions         []groupVersionForDiscovery `json:"versions"`
	PreferredVersion groupVersionForDiscovery   `json:"preferredVersion"`
}

type apiResource struct {
	Name         string   `json:"name"`
	SingularName string   `json:"singularName"`
	Group        string   `json:"group,omitempty"`
	Version      string   `json:"version,omitempty"`
	Namespaced   bool     `json:"namespaced"`
	Kind         string   `json:"kind"`
	Verbs        []string `json:"verbs"`
	ShortNames   []string `json:"shortNames,omitempty"`
	Categories   []string `json:"categories,omitempty"`
}

type apiResourceList struct {
	Kind         string        `json:"kind"`
	APIVersion   string        `json:"apiVersion"`
	GroupVersion string        `json:"groupVersion"`
	Resources    []apiResource `json:"resources"`
}

var resourceVerbs = []string{"create", "delete", "deletecollection", "get", "list", "patch", "update", "watch"}

// servedGroup is one group-version as discovery tells of it.
type servedGroup struct {
	apis.Group
	Resources []apiResource
}

// reviewGroups are the groups whose resources are questions, not stored
// objects: each is created and answered in the same request (the server
// package serves them by hand), so their only verb is create, as in
// Kubernetes. Without them here, `kubectl api-resources` would not list
// them and clients that check discovery first would not find them.
var reviewGroups = []servedGroup{
	{Group: apis.Group{Name: "authentication.k8s.io", Version: "v1"}, Resources: []apiResource{
		{Name: "selfsubjectreviews", SingularName: "selfsubjectreview", Kind: "SelfSubjectReview", Verbs: []string{"create"}},
		{Name: "tokenreviews", SingularName: "tokenreview", Kind: "TokenReview", Verbs: []string{"create"}},
	}},
	{Group: apis.Group{Name: "authorization.k8s.io", Version: "v1"}, Resources: []apiResource{
		{Name: "selfsubjectaccessreviews", SingularName: "selfsubjectaccessreview", Kind: "SelfSubjectAccessReview", Verbs: []string{"create"}},
		{Name: "selfsubjectrulesreviews", SingularName: "selfsubjectrulesreview", Kind: "SelfSubjectRulesReview", Verbs: []string{"create"}},
		{Name: "subjectaccessreviews", SingularName: "subjectaccessreview", Kind: "SubjectAccessReview", Verbs: []string{"create"}},
	}},
}

// servedGroups are every group-version discovery lists: the stored groups
// of proto/apis in their order, then the review groups.
func servedGroups() []servedGroup {
	var out []servedGroup
	for _, g := range apis.Groups {
		out = append(out, servedGroup{Group: g, Resources: storedResources(g)})
	}
	return append(out, reviewGroups...)
}

// storedResources are a stored group's resources and their subresources.
func storedResources(g apis.Group) []apiResource {
	out := []apiResource{}
	for _, r := range apis.InGroup(g) {
		out = append(out, apiResource{
			Name: r.Name, SingularName: r.Singular, Namespaced: r.Namespaced, Kind: r.Kind,
			Verbs: resourceVerbs, ShortNames: r.ShortNames, Categories: r.Categories,
		})
		if r.Status {
			out = append(out, apiResource{Name: r.Name + "/status", Namespaced: r.Namespaced, Kind: r.Kind, Verbs: []string{"get", "patch", "update"}})
		}
		if r.Scale {
			// The scale subresource's kind is autoscaling/v1 Scale, which
			// kubectl scale finds here.
			out = append(out, apiResource{Name: r.Name + "/scale", Namespaced: r.Namespaced, Group: "autoscaling", Version: "v1", Kind: "Scale", Verbs: []string{"get", "patch", "update"}})
		}
		for _, a := range r.Actions {
			out = append(out, apiResource{Name: r.Name + "/" + a.Name, Namespaced: r.Namespaced, Kind: a.Kind, Verbs: []string{"create"}})
		}
	}
	return out
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json")
	_ = json.NewEncoder(w).Encode(v)
}

// registerDiscovery mounts the discovery documents, legacy and aggregated,
// and /version on mux.
func registerDiscovery(mux *http.ServeMux) error {
	served := servedGroups()
	aggregatedCore, aggregatedGroups, err := aggregatedDocuments(served)
	if err != nil {
		return err
	}
	mux.HandleFunc("GET /api", func(w http.ResponseWriter, r *http.Request) {
		if wantsAggregated(r) {
			serveAggregated(w, aggregatedCore)
			return
		}
		writeJSON(w, map[string]any{
			"kind": "APIVersions", "versions": []string{"v1"},
			"serverAddressByClientCIDRs": []map[string]string{{"clientCIDR": "0.0.0.0/0", "serverAddress": r.Host}},
		})
	})
	mux.HandleFunc("GET /apis", func(w http.ResponseWriter, r *http.Request) {
		if wantsAggregated(r) {
			serveAggregated(w, aggregatedGroups)
			return
		}
		groups := []apiGroup{}
		for _, g := range served {
			if g.Name == "" {
				continue
			}
			gv := groupVersionForDiscovery{GroupVersion: g.GroupVersion(), Version: g.Version}
			groups = append(groups, apiGroup{Name: g.Name, Versions: []groupVersionForDiscovery{gv}, PreferredVersion: gv})
		}
		writeJSON(w, map[string]any{"kind": "APIGroupList", "apiVersion": "v1", "groups": groups})
	})
	for _, g := range served {
		list := apiResourceList{Kind: "APIResourceList", APIVersion: "v1", GroupVersion: g.GroupVersion(), Resources: g.Resources}
		mux.HandleFunc("GET "+g.PathPrefix(), func(w http.ResponseWriter, r *http.Request) { writeJSON(w, list) })
		if g.Name != "" {
			gv := groupVersionForDiscovery{GroupVersion: g.GroupVersion(), Version: g.Version}
			group := apiGroup{Name: g.Name, Versions: []groupVersionForDiscovery{gv}, PreferredVersion: gv}
			mux.HandleFunc("GET /apis/"+g.Name, func(w http.ResponseWriter, r *http.Request) {
				writeJSON(w, map[string]any{"kind": "APIGroup", "apiVersion": "v1", "name": group.Name, "versions": group.Versions, "preferredVersion": group.PreferredVersion})
			})
		}
	}
	mux.HandleFunc("GET /version", func(w http.ResponseWriter, r *http.Request) {
		writeJSON(w, map[string]string{
			"major": "1", "minor": "37", "gitVersion": Version, "gitCommit": "", "gitTreeState": "clean",
			"buildDate": "", "goVersion": runtime.Version(), "compiler": runtime.Compiler,
			"platform": runtime.GOOS + "/" + runtime.GOARCH,
		})
	})
	return nil
}

// Version is the server version /version reports; Kubernetes' minor version
// tells clients which API behaviour to expect.
var Version = "v1.37.0-podline"
