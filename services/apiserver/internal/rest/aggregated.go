package rest

import (
	"encoding/json"
	"mime"
	"net/http"
	"strings"
)

// Aggregated discovery (apidiscovery.k8s.io/v2): /api and /apis answer
// every group's resources in one document when the client asks for it, as
// kubectl and client-go do first, saving a request per group-version. The
// documents are derived from the legacy resource lists, so both agree.

// aggregatedContentType is what the client asks for and the answer's type.
const aggregatedContentType = "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList"

type groupVersionKind struct {
	Group   string `json:"group"`
	Version string `json:"version"`
	Kind    string `json:"kind"`
}

type discoverySubresource struct {
	Subresource  string           `json:"subresource"`
	ResponseKind groupVersionKind `json:"responseKind"`
	Verbs        []string         `json:"verbs"`
}

type discoveryResource struct {
	Resource         string                 `json:"resource"`
	ResponseKind     groupVersionKind       `json:"responseKind"`
	Scope            string                 `json:"scope"`
	SingularResource string                 `json:"singularResource"`
	Verbs            []string               `json:"verbs"`
	ShortNames       []string               `json:"shortNames,omitempty"`
	Categories       []string               `json:"categories,omitempty"`
	Subresources     []discoverySubresource `json:"subresources,omitempty"`
}

type discoveryVersion struct {
	Version   string              `json:"version"`
	Resources []discoveryResource `json:"resources"`
	Freshness string              `json:"freshness"`
}

type discoveryGroup struct {
	Metadata struct {
		Name string `json:"name,omitempty"`
	} `json:"metadata"`
	Versions []discoveryVersion `json:"versions"`
}

type discoveryGroupList struct {
	Kind       string           `json:"kind"`
	APIVersion string           `json:"apiVersion"`
	Metadata   struct{}         `json:"metadata"`
	Items      []discoveryGroup `json:"items"`
}

// aggregatedGroup turns a group's legacy resource list into its
// aggregated entry: "pods/status" becomes a subresource of pods.
func aggregatedGroup(g servedGroup) discoveryGroup {
	v := discoveryVersion{Version: g.Version, Resources: []discoveryResource{}, Freshness: "Current"}
	index := map[string]int{}
	for _, res := range g.Resources {
		scope := "Cluster"
		if res.Namespaced {
			scope = "Namespaced"
		}
		parent, sub, isSub := strings.Cut(res.Name, "/")
		if !isSub {
			index[res.Name] = len(v.Resources)
			v.Resources = append(v.Resources, discoveryResource{
				Resource: res.Name, ResponseKind: groupVersionKind{Group: g.Name, Version: g.Version, Kind: res.Kind},
				Scope: scope, SingularResource: res.SingularName, Verbs: res.Verbs, ShortNames: res.ShortNames, Categories: res.Categories,
			})
			continue
		}
		i, ok := index[parent]
		if !ok {
			continue
		}
		kind := groupVersionKind{Group: g.Name, Version: g.Version, Kind: res.Kind}
		if sub == "scale" {
			// The scale subresource answers autoscaling/v1 Scale in every group.
			kind = groupVersionKind{Group: "autoscaling", Version: "v1", Kind: "Scale"}
		}
		v.Resources[i].Subresources = append(v.Resources[i].Subresources, discoverySubresource{Subresource: sub, ResponseKind: kind, Verbs: res.Verbs})
	}
	dg := discoveryGroup{Versions: []discoveryVersion{v}}
	dg.Metadata.Name = g.Name
	return dg
}

// aggregatedDocuments are the answers of /api (core) and /apis (the rest).
func aggregatedDocuments(served []servedGroup) (legacy, named []byte, err error) {
	core := discoveryGroupList{Kind: "APIGroupDiscoveryList", APIVersion: "apidiscovery.k8s.io/v2", Items: []discoveryGroup{}}
	groups := core
	for _, g := range served {
		if g.Name == "" {
			core.Items = append(core.Items, aggregatedGroup(g))
		} else {
			groups.Items = append(groups.Items, aggregatedGroup(g))
		}
	}
	if legacy, err = json.Marshal(core); err != nil {
		return nil, nil, err
	}
	named, err = json.Marshal(groups)
	return legacy, named, err
}

// wantsAggregated tells whether the first media range of the Accept header
// a server can answer asks for aggregated discovery.
func wantsAggregated(r *http.Request) bool {
	for _, v := range r.Header.Values("Accept") {
		for _, rng := range strings.Split(v, ",") {
			mt, params, err := mime.ParseMediaType(strings.TrimSpace(rng))
			if err != nil || (mt != "application/json" && mt != "*/*" && mt != "application/*") {
				continue
			}
			as, transform := params["as"]
			if !transform {
				return false
			}
			if as == "APIGroupDiscoveryList" && params["g"] == "apidiscovery.k8s.io" && params["v"] == "v2" {
				return true
			}
		}
	}
	return false
}

// serveAggregated writes an aggregated discovery document.
func serveAggregated(w http.ResponseWriter, doc []byte) {
	w.Header().Set("Content-Type", aggregatedContentType)
	w.Header().Set("Vary", "Accept")
	_, _ = w.Write(doc)
}
