package authz

import (
	"strings"
	"sync"

	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// services maps a gRPC service's full name to its resource.
var services = sync.OnceValue(func() map[string]apis.Resource {
	m := map[string]apis.Resource{}
	for _, r := range apis.Resources {
		m[r.Group.Proto+"."+r.Service()] = r
	}
	return m
})

// FromGRPC maps a call of a resource's service (fullMethod
// "/podline.core.v1.Pods/UpdateStatus") and its decoded request to the
// attributes of the same REST request: Get→get, List→list (watch when the
// request asks to watch), Watch→watch, Create→create (no name, as a POST
// to a collection), Update→update, UpdateStatus→update of "status",
// Delete→delete, DeleteCollection→deletecollection, Patch→patch,
// Get/Patch-Status→get/patch of "status", Get/Update/Patch-Scale→
// get/update/patch of "scale", and an action (Bind) → create of its
// subresource ("binding"). ok is false for a method of no resource's service.
func FromGRPC(fullMethod string, req any) (a Attributes, ok bool) {
	svc, method, found := strings.Cut(strings.TrimPrefix(fullMethod, "/"), "/")
	if !found {
		return Attributes{}, false
	}
	res, ok := services()[svc]
	if !ok {
		return Attributes{}, false
	}
	a = Attributes{ResourceRequest: true, APIGroup: res.Group.Name, Resource: res.Name}
	if m, isProto := req.(proto.Message); isProto && m != nil {
		a.Namespace = stringField(m, "namespace")
		a.Name = stringField(m, "name")
	}
	switch method {
	case "Get":
		a.Verb = "get"
	case "List":
		a.Verb = "list"
		if lr, _ := req.(*metav1.ListRequest); lr.GetWatch() {
			a.Verb = "watch"
		}
	case "Watch":
		a.Verb = "watch"
	case "Create":
		a.Verb, a.Name = "create", ""
	case "Update":
		a.Verb = "update"
	case "UpdateStatus":
		a.Verb, a.Subresource = "update", "status"
	case "Delete":
		a.Verb = "delete"
	case "DeleteCollection":
		a.Verb = "deletecollection"
	case "Patch":
		a.Verb = "patch"
	case "GetStatus", "PatchStatus":
		a.Verb, a.Subresource = strings.ToLower(strings.TrimSuffix(method, "Status")), "status"
	case "GetScale", "UpdateScale", "PatchScale":
		a.Verb, a.Subresource = strings.ToLower(strings.TrimSuffix(method, "Scale")), "scale"
	default:
		a.Verb = strings.ToLower(method)
		for _, act := range res.Actions {
			if act.Method == method {
				a.Verb, a.Subresource = "create", act.Name
			}
		}
	}
	if lr, isList := req.(*metav1.ListRequest); isList {
		a.FieldSelector = lr.GetFieldSelector()
	}
	return a, true
}

func stringField(m proto.Message, name protoreflect.Name) string {
	r := m.ProtoReflect()
	fd := r.Descriptor().Fields().ByName(name)
	if fd == nil || fd.Kind() != protoreflect.StringKind || fd.IsList() {
		return ""
	}
	return r.Get(fd).String()
}

// IsResourcePath reports whether a REST path names a resource
// (/api/v1/<resource>..., /apis/<group>/<version>/<resource>...) rather
// than discovery, health or version.
func IsResourcePath(path string) bool {
	parts := strings.Split(strings.Trim(path, "/"), "/")
	switch {
	case len(parts) >= 3 && parts[0] == "api":
		return true
	case len(parts) >= 4 && parts[0] == "apis":
		return true
	}
	return false
}
