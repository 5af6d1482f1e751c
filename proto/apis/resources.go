package apis

import "strings"

// Group is one API group/version and the proto package that defines it.
type Group struct {
	// Name is the Kubernetes group ("" for core).
	Name    string
	Version string
	// Proto is the proto package ("podline.core.v1"); Dir is its directory under proto/.
	Proto string
	Dir   string
}

// GroupVersion is "v1" for core and "group/version" otherwise, as in apiVersion.
func (g Group) GroupVersion() string {
	if g.Name == "" {
		return g.Version
	}
	return g.Name + "/" + g.Version
}

// PathPrefix is the REST prefix: /api/v1 for core, /apis/<group>/<version> otherwise.
func (g Group) PathPrefix() string {
	if g.Name == "" {
		return "/api/" + g.Version
	}
	return "/apis/" + g.Name + "/" + g.Version
}

// Resource is one REST resource.
type Resource struct {
	Group Group
	// Kind is the object's kind ("Pod"); the proto message has the same name.
	Kind string
	// Name is the plural resource name ("pods"); Singular is its singular ("pod").
	Name       string
	Singular   string
	Namespaced bool
	// Status is true when the resource has a status subresource.
	Status     bool
	ShortNames []string
	Categories []string
	// EtcdName overrides Name in the etcd key where kube-apiserver does
	// ("minions" for nodes, "services/specs" for services).
	EtcdName string
	// Actions are subresources that take a body of another kind (pods/binding).
	Actions []Action
	// Scale is true when the resource has the scale subresource (autoscaling/v1 Scale).
	Scale bool
	// Warning is sent with every answer about the resource, as Kubernetes
	// warns about a deprecated kind.
	Warning string
}

// Action is a subresource written with a body of its own kind, answered by a Status.
type Action struct {
	// Name is the subresource ("binding"); Method the gRPC method ("Bind").
	Name   string
	Method string
	// Kind is the body's message in the same proto package ("Binding").
	Kind string
}

// Message is the proto full name of the kind's message.
func (r Resource) Message() string { return r.Group.Proto + "." + r.Kind }

// EtcdPrefix is the key prefix of the resource's objects, with a trailing slash:
// /registry/pods/, /registry/minions/.
func (r Resource) EtcdPrefix() string {
	name := r.Name
	if r.EtcdName != "" {
		name = r.EtcdName
	}
	return "/registry/" + name + "/"
}

// Service is the name of the gRPC service for the resource: the kind in
// the plural ("Pods", "PriorityClasses"). A kind that is plural already
// names its message, so its service is "EndpointsService".
func (r Resource) Service() string {
	switch {
	case strings.HasSuffix(r.Kind, "ss"):
		return r.Kind + "es"
	case strings.HasSuffix(r.Kind, "s"):
		return r.Kind + "Service"
	}
	return r.Kind + "s"
}

// GroupResource is "pods" for core and "deployments.apps" otherwise, as in
// Kubernetes' error messages.
func (r Resource) GroupResource() string {
	if r.Group.Name == "" {
		return r.Name
	}
	return r.Name + "." + r.Group.Name
}

var (
	Core         = Group{Name: "", Version: "v1", Proto: "podline.core.v1", Dir: "core/v1"}
	Apps         = Group{Name: "apps", Version: "v1", Proto: "podline.apps.v1", Dir: "apps/v1"}
	Coordination = Group{Name: "coordination.k8s.io", Version: "v1", Proto: "podline.coordination.v1", Dir: "coordination/v1"}
	Discovery    = Group{Name: "discovery.k8s.io", Version: "v1", Proto: "podline.discovery.v1", Dir: "discovery/v1"}
	RBAC         = Group{Name: "rbac.authorization.k8s.io", Version: "v1", Proto: "podline.rbac.v1", Dir: "rbac/v1"}
	Scheduling   = Group{Name: "scheduling.k8s.io", Version: "v1", Proto: "podline.scheduling.v1", Dir: "scheduling/v1"}
)

// Groups lists every group in discovery order.
var Groups = []Group{Core, Apps, Coordination, Discovery, RBAC, Scheduling}

// Resources lists every resource podline serves.
var Resources = []Resource{
	{Group: Core, Kind: "Pod", Name: "pods", Singular: "pod", Namespaced: true, Status: true, ShortNames: []string{"po"}, Categories: []string{"all"},
		Actions: []Action{{Name: "binding", Method: "Bind", Kind: "Binding"}}},
	{Group: Core, Kind: "Node", Name: "nodes", Singular: "node", Status: true, EtcdName: "minions", ShortNames: []string{"no"}},
	{Group: Core, Kind: "Namespace", Name: "namespaces", Singular: "namespace", Status: true, ShortNames: []string{"ns"}},
	{Group: Core, Kind: "Service", Name: "services", Singular: "service", Namespaced: true, Status: true, EtcdName: "services/specs", ShortNames: []string{"svc"}, Categories: []string{"all"}},
	{Group: Core, Kind: "Endpoints", Name: "endpoints", Singular: "endpoints", Namespaced: true, ShortNames: []string{"ep"},
		Warning: "v1 Endpoints is deprecated in v1.33+; use discovery.k8s.io/v1 EndpointSlice"},
	{Group: Core, Kind: "Event", Name: "events", Singular: "event", Namespaced: true, ShortNames: []string{"ev"}},
	{Group: Core, Kind: "ConfigMap", Name: "configmaps", Singular: "configmap", Namespaced: true, ShortNames: []string{"cm"}},
	{Group: Core, Kind: "Secret", Name: "secrets", Singular: "secret", Namespaced: true},
	{Group: Core, Kind: "ServiceAccount", Name: "serviceaccounts", Singular: "serviceaccount", Namespaced: true, ShortNames: []string{"sa"}},
	{Group: Core, Kind: "ResourceQuota", Name: "resourcequotas", Singular: "resourcequota", Namespaced: true, Status: true, ShortNames: []string{"quota"}},
	{Group: Apps, Kind: "Deployment", Name: "deployments", Singular: "deployment", Namespaced: true, Status: true, Scale: true, ShortNames: []string{"deploy"}, Categories: []string{"all"}},
	{Group: Apps, Kind: "ReplicaSet", Name: "replicasets", Singular: "replicaset", Namespaced: true, Status: true, Scale: true, ShortNames: []string{"rs"}, Categories: []string{"all"}},
	{Group: Coordination, Kind: "Lease", Name: "leases", Singular: "lease", Namespaced: true},
	{Group: Discovery, Kind: "EndpointSlice", Name: "endpointslices", Singular: "endpointslice", Namespaced: true},
	{Group: RBAC, Kind: "Role", Name: "roles", Singular: "role", Namespaced: true},
	{Group: RBAC, Kind: "ClusterRole", Name: "clusterroles", Singular: "clusterrole"},
	{Group: RBAC, Kind: "RoleBinding", Name: "rolebindings", Singular: "rolebinding", Namespaced: true},
	{Group: RBAC, Kind: "ClusterRoleBinding", Name: "clusterrolebindings", Singular: "clusterrolebinding"},
	{Group: Scheduling, Kind: "PriorityClass", Name: "priorityclasses", Singular: "priorityclass", ShortNames: []string{"pc"}},
}

// Lookup finds a resource by group and plural name.
func Lookup(group, name string) (Resource, bool) {
	for _, r := range Resources {
		if r.Group.Name == group && r.Name == name {
			return r, true
		}
	}
	return Resource{}, false
}

// LookupKind finds a resource by apiVersion ("v1", "apps/v1") and kind.
func LookupKind(apiVersion, kind string) (Resource, bool) {
	for _, r := range Resources {
		if r.Group.GroupVersion() == apiVersion && r.Kind == kind {
			return r, true
		}
	}
	return Resource{}, false
}

// InGroup lists the resources of one group.
func InGroup(g Group) []Resource {
	var out []Resource
	for _, r := range Resources {
		if r.Group == g {
			out = append(out, r)
		}
	}
	return out
}

// ByMessage finds a resource by its proto message full name.
func ByMessage(fullName string) (Resource, bool) {
	for _, r := range Resources {
		if r.Message() == fullName {
			return r, true
		}
	}
	return Resource{}, false
}
