package openapi

import (
	"strings"

	"podline.dev/proto/apis"
)

// pathItem holds the operations on one path.
type pathItem struct {
	Get        *operation  `json:"get,omitempty"`
	Put        *operation  `json:"put,omitempty"`
	Post       *operation  `json:"post,omitempty"`
	Delete     *operation  `json:"delete,omitempty"`
	Patch      *operation  `json:"patch,omitempty"`
	Parameters []parameter `json:"parameters,omitempty"`
}

type operation struct {
	Description string              `json:"description"`
	OperationID string              `json:"operationId"`
	Tags        []string            `json:"tags"`
	Consumes    []string            `json:"consumes,omitempty"` // v2
	Produces    []string            `json:"produces,omitempty"` // v2
	Parameters  []parameter         `json:"parameters,omitempty"`
	RequestBody *body               `json:"requestBody,omitempty"` // v3
	Responses   map[string]response `json:"responses"`
	Action      string              `json:"x-kubernetes-action"`
	GVK         GVK                 `json:"x-kubernetes-group-version-kind"`
}

// parameter is a path or query parameter; v3 gives its type as a schema,
// v2 inline, and v2 passes a request body as a parameter "in": "body".
type parameter struct {
	Name        string  `json:"name"`
	In          string  `json:"in"`
	Description string  `json:"description,omitempty"`
	Required    bool    `json:"required,omitempty"`
	UniqueItems bool    `json:"uniqueItems,omitempty"`
	Type        string  `json:"type,omitempty"`
	Schema      *Schema `json:"schema,omitempty"`
}

type body struct {
	Content  map[string]mediaType `json:"content"`
	Required bool                 `json:"required"`
}

type mediaType struct {
	Schema *Schema `json:"schema"`
}

type response struct {
	Description string               `json:"description"`
	Content     map[string]mediaType `json:"content,omitempty"` // v3
	Schema      *Schema              `json:"schema,omitempty"`  // v2
}

// Media types of requests and answers, and of the four kinds of patch.
var (
	jsonTypes  = []string{"application/json"}
	patchTypes = []string{"application/json-patch+json", "application/merge-patch+json", "application/strategic-merge-patch+json", "application/apply-patch+yaml"}
)

// paths writes the operations of every resource in the group.
type paths struct {
	b  *builder
	v2 bool
	m  map[string]*pathItem
}

func (p *paths) param(name, in, typ, description string, required bool) parameter {
	pr := parameter{Name: name, In: in, Description: description, Required: required, UniqueItems: true}
	if p.v2 {
		pr.Type = typ
	} else {
		pr.Schema = &Schema{Type: typ}
	}
	return pr
}

// Parameters as Kubernetes names and describes them.
func (p *paths) listParams() []parameter {
	return []parameter{
		p.param("allowWatchBookmarks", "query", "boolean", "allowWatchBookmarks requests watch events with type \"BOOKMARK\".", false),
		p.param("continue", "query", "string", "The continue option should be set when retrieving more results from the server.", false),
		p.param("fieldSelector", "query", "string", "A selector to restrict the list of returned objects by their fields. Defaults to everything.", false),
		p.param("labelSelector", "query", "string", "A selector to restrict the list of returned objects by their labels. Defaults to everything.", false),
		p.param("limit", "query", "integer", "limit is a maximum number of responses to return for a list call.", false),
		p.param("resourceVersion", "query", "string", "resourceVersion sets a constraint on what resource versions a request may be served from.", false),
		p.param("resourceVersionMatch", "query", "string", "resourceVersionMatch determines how resourceVersion is applied to list calls.", false),
		p.param("sendInitialEvents", "query", "boolean", "`sendInitialEvents=true` may be set together with `watch=true`.", false),
		p.param("timeoutSeconds", "query", "integer", "Timeout for the list/watch call.", false),
		p.param("watch", "query", "boolean", "Watch for changes to the described resources and return them as a stream of add, update, and remove notifications.", false),
	}
}

func (p *paths) writeParams(patch bool) []parameter {
	out := []parameter{
		p.param("dryRun", "query", "string", "When present, indicates that modifications should not be persisted. Valid values are: - All: all dry run stages will be processed", false),
		p.param("fieldManager", "query", "string", "fieldManager is a name associated with the actor or entity that is making these changes.", false),
		p.param("fieldValidation", "query", "string", "fieldValidation instructs the server on how to handle objects in the request (POST/PUT/PATCH) containing unknown or duplicate fields. Valid values are: - Ignore - Warn - Strict", false),
	}
	if patch {
		out = append(out, p.param("force", "query", "boolean", "Force is going to \"force\" Apply requests. It means user will re-acquire conflicting fields owned by other people.", false))
	}
	return out
}

func (p *paths) deleteParams() []parameter {
	return []parameter{
		p.param("dryRun", "query", "string", "When present, indicates that modifications should not be persisted.", false),
		p.param("gracePeriodSeconds", "query", "integer", "The duration in seconds before the object should be deleted.", false),
		p.param("propagationPolicy", "query", "string", "Whether and how garbage collection will be performed: Orphan, Background or Foreground.", false),
	}
}

// op makes an operation answering with the schema res.
func (p *paths) op(action, verb, id string, r apis.Resource, gvk GVK, res *Schema, params []parameter, in *Schema, consumes []string) *operation {
	o := &operation{
		Description: verb + " " + gvk.Kind, OperationID: id, Tags: []string{tag(r.Group)}, Parameters: params,
		Action: action, GVK: gvk,
		Responses: map[string]response{"200": p.response(res), "401": {Description: "Unauthorized"}},
	}
	if in != nil {
		if p.v2 {
			o.Parameters = append([]parameter{{Name: "body", In: "body", Required: true, Schema: in}}, o.Parameters...)
			o.Consumes = consumes
		} else {
			o.RequestBody = &body{Content: map[string]mediaType{}, Required: true}
			for _, ct := range consumes {
				o.RequestBody.Content[ct] = mediaType{Schema: in}
			}
		}
	}
	if p.v2 {
		o.Produces = []string{"application/json", "application/yaml"}
	}
	if action == "post" {
		o.Responses["201"] = p.response(res)
	}
	return o
}

func (p *paths) response(s *Schema) response {
	if p.v2 {
		return response{Description: "OK", Schema: s}
	}
	return response{Description: "OK", Content: map[string]mediaType{"application/json": {Schema: s}}}
}

// add writes the collection, object, status and scale paths of one
// resource; scaleRef is autoscaling/v1 Scale.
func (p *paths) add(r apis.Resource, kindRef, listRef, statusRef, patchRef, scaleRef *Schema) {
	gvk := GVK{Group: r.Group.Name, Version: r.Group.Version, Kind: r.Kind}
	name := p.param("name", "path", "string", "name of the "+r.Kind, true)
	ns := p.param("namespace", "path", "string", "object name and auth scope, such as for teams and projects", true)
	pretty := p.param("pretty", "query", "string", "If 'true', then the output is pretty printed.", false)
	scope, collection := "", r.Group.PathPrefix()+"/"+r.Name
	common := []parameter{pretty}
	if r.Namespaced {
		scope, collection = "Namespaced", r.Group.PathPrefix()+"/namespaces/{namespace}/"+r.Name
		common = []parameter{ns, pretty}
		// Kubernetes also lists a namespaced kind across all namespaces.
		p.m[r.Group.PathPrefix()+"/"+r.Name] = &pathItem{
			Get:        p.op("list", "list or watch objects of kind", "list"+idOf(r, "ForAllNamespaces"), r, gvk, listRef, p.listParams(), nil, nil),
			Parameters: []parameter{pretty},
		}
	}
	p.m[collection] = &pathItem{
		Get:  p.op("list", "list or watch objects of kind", "list"+idOf(r, scope), r, gvk, listRef, p.listParams(), nil, nil),
		Post: p.op("post", "create a", "create"+idOf(r, scope), r, gvk, kindRef, p.writeParams(false), kindRef, jsonTypes),
		Delete: p.op("deletecollection", "delete collection of", "deleteCollection"+idOf(r, scope), r, gvk, statusRef,
			append(p.listParams(), p.deleteParams()...), nil, nil),
		Parameters: common,
	}
	item := &pathItem{
		Get:        p.op("get", "read the specified", "read"+idOf(r, scope), r, gvk, kindRef, nil, nil, nil),
		Put:        p.op("put", "replace the specified", "replace"+idOf(r, scope), r, gvk, kindRef, p.writeParams(false), kindRef, jsonTypes),
		Patch:      p.op("patch", "partially update the specified", "patch"+idOf(r, scope), r, gvk, kindRef, p.writeParams(true), patchRef, patchTypes),
		Delete:     p.op("delete", "delete a", "delete"+idOf(r, scope), r, gvk, statusRef, p.deleteParams(), nil, nil),
		Parameters: append([]parameter{name}, common...),
	}
	p.m[collection+"/{name}"] = item
	if r.Scale {
		scale := GVK{Group: "autoscaling", Version: "v1", Kind: "Scale"}
		p.m[collection+"/{name}/scale"] = &pathItem{
			Get:        p.op("get", "read scale of the specified", "read"+idOf(r, scope)+"Scale", r, scale, scaleRef, nil, nil, nil),
			Put:        p.op("put", "replace scale of the specified", "replace"+idOf(r, scope)+"Scale", r, scale, scaleRef, p.writeParams(false), scaleRef, jsonTypes),
			Patch:      p.op("patch", "partially update scale of the specified", "patch"+idOf(r, scope)+"Scale", r, scale, scaleRef, p.writeParams(true), patchRef, patchTypes),
			Parameters: append([]parameter{name}, common...),
		}
	}
	if r.Status {
		p.m[collection+"/{name}/status"] = &pathItem{
			Get:        p.op("get", "read status of the specified", "read"+idOf(r, scope)+"Status", r, gvk, kindRef, nil, nil, nil),
			Put:        p.op("put", "replace status of the specified", "replace"+idOf(r, scope)+"Status", r, gvk, kindRef, p.writeParams(false), kindRef, jsonTypes),
			Patch:      p.op("patch", "partially update status of the specified", "patch"+idOf(r, scope)+"Status", r, gvk, kindRef, p.writeParams(true), patchRef, patchTypes),
			Parameters: append([]parameter{name}, common...),
		}
	}
}

// idOf is the operation id's tail: CoreV1NamespacedPod, AppsV1Deployment...
func idOf(r apis.Resource, scope string) string {
	if scope == "ForAllNamespaces" {
		return groupToken(r.Group) + r.Kind + scope
	}
	return groupToken(r.Group) + scope + r.Kind
}

// groupToken is the group/version in an operation id: CoreV1,
// RbacAuthorizationV1, CoordinationV1.
func groupToken(g apis.Group) string {
	name := strings.TrimSuffix(g.Name, ".k8s.io")
	if name == "" {
		name = "core"
	}
	var b strings.Builder
	for _, part := range strings.Split(name, ".") {
		b.WriteString(strings.ToUpper(part[:1]) + part[1:])
	}
	return b.String() + strings.ToUpper(g.Version[:1]) + g.Version[1:]
}

// tag is the operations' tag: core_v1, apps_v1, rbacAuthorization_v1.
func tag(g apis.Group) string {
	t := groupToken(g)
	t = strings.TrimSuffix(t, strings.ToUpper(g.Version[:1])+g.Version[1:])
	return strings.ToLower(t[:1]) + t[1:] + "_" + g.Version
}
