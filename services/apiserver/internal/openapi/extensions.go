package openapi

import "google.golang.org/protobuf/reflect/protoreflect"

// listExtension is how strategic merge patch and server-side apply treat
// a list: merged by a key, merged as a set, or replaced whole.
type listExtension struct {
	mergeKey, strategy string
	listType           string
	mapKeys            []string
}

func mapList(strategy, mergeKey string, keys ...string) listExtension {
	if len(keys) == 0 {
		keys = []string{mergeKey}
	}
	return listExtension{mergeKey: mergeKey, strategy: strategy, listType: "map", mapKeys: keys}
}

var (
	setList    = listExtension{strategy: "merge", listType: "set"}
	atomicList = listExtension{listType: "atomic"}
)

// listExtensions are Kubernetes' patch strategies and list types for
// podline's lists. Tolerations, taints, container statuses and most
// selectors' lists are atomic in Kubernetes too: a patch replaces them.
var listExtensions = map[protoreflect.FullName]listExtension{
	"podline.core.v1.PodSpec.containers":                     mapList("merge", "name"),
	"podline.core.v1.PodSpec.init_containers":                mapList("merge", "name"),
	"podline.core.v1.PodSpec.volumes":                        mapList("merge,retainKeys", "name"),
	"podline.core.v1.PodSpec.image_pull_secrets":             mapList("merge", "name"),
	"podline.core.v1.PodSpec.host_aliases":                   mapList("merge", "ip"),
	"podline.core.v1.PodSpec.scheduling_gates":               mapList("merge", "name"),
	"podline.core.v1.PodSpec.topology_spread_constraints":    mapList("merge", "topologyKey", "topologyKey", "whenUnsatisfiable"),
	"podline.core.v1.PodSpec.tolerations":                    atomicList,
	"podline.core.v1.PodSpec.readiness_gates":                atomicList,
	"podline.core.v1.Container.ports":                        mapList("merge", "containerPort", "containerPort", "protocol"),
	"podline.core.v1.Container.env":                          mapList("merge", "name"),
	"podline.core.v1.Container.volume_mounts":                mapList("merge", "mountPath"),
	"podline.core.v1.Container.env_from":                     atomicList,
	"podline.core.v1.Container.command":                      atomicList,
	"podline.core.v1.Container.args":                         atomicList,
	"podline.core.v1.PodStatus.conditions":                   mapList("merge", "type"),
	"podline.core.v1.PodStatus.pod_ips":                      mapList("merge", "ip"),
	"podline.core.v1.PodStatus.host_ips":                     mapList("merge", "ip"),
	"podline.core.v1.PodStatus.init_container_statuses":      atomicList,
	"podline.core.v1.PodStatus.container_statuses":           atomicList,
	"podline.core.v1.NodeSpec.pod_cidrs":                     setList,
	"podline.core.v1.NodeSpec.taints":                        atomicList,
	"podline.core.v1.NodeStatus.conditions":                  mapList("merge", "type"),
	"podline.core.v1.NodeStatus.addresses":                   mapList("merge", "type"),
	"podline.core.v1.NamespaceStatus.conditions":             mapList("merge", "type"),
	"podline.core.v1.ServiceSpec.ports":                      mapList("merge", "port", "port", "protocol"),
	"podline.core.v1.ServiceStatus.conditions":               mapList("merge", "type"),
	"podline.apps.v1.DeploymentStatus.conditions":            mapList("merge", "type"),
	"podline.apps.v1.ReplicaSetStatus.conditions":            mapList("merge", "type"),
	"podline.meta.v1.ObjectMeta.owner_references":            mapList("merge", "uid"),
	"podline.meta.v1.ObjectMeta.finalizers":                  setList,
	"podline.discovery.v1.EndpointSlice.endpoints":           atomicList,
	"podline.discovery.v1.EndpointSlice.ports":               atomicList,
	"podline.rbac.v1.Role.rules":                             atomicList,
	"podline.rbac.v1.ClusterRole.rules":                      atomicList,
	"podline.rbac.v1.RoleBinding.subjects":                   atomicList,
	"podline.rbac.v1.ClusterRoleBinding.subjects":            atomicList,
	"podline.core.v1.ServiceAccount.secrets":                 mapList("merge", "name"),
	"podline.core.v1.ServiceAccount.image_pull_secrets":      atomicList,
	"podline.core.v1.LoadBalancerStatus.ingress":             atomicList,
	"podline.core.v1.PodSecurityContext.supplemental_groups": atomicList,
}

// quantityFields are the string fields (or maps of them) that hold a
// resource.Quantity, as pkg/k8sjson reads them.
var quantityFields = map[protoreflect.FullName]bool{
	"podline.core.v1.ResourceRequirements.limits":     true,
	"podline.core.v1.ResourceRequirements.requests":   true,
	"podline.core.v1.PodSpec.overhead":                true,
	"podline.core.v1.NodeStatus.capacity":             true,
	"podline.core.v1.NodeStatus.allocatable":          true,
	"podline.core.v1.ResourceFieldSelector.divisor":   true,
	"podline.core.v1.EmptyDirVolumeSource.size_limit": true,
}

// required lists the fields Kubernetes' schema marks required.
var required = map[protoreflect.FullName][]string{
	"podline.core.v1.PodSpec":                  {"containers"},
	"podline.core.v1.Container":                {"name"},
	"podline.core.v1.ContainerPort":            {"containerPort"},
	"podline.core.v1.EnvVar":                   {"name"},
	"podline.core.v1.Volume":                   {"name"},
	"podline.core.v1.VolumeMount":              {"name", "mountPath"},
	"podline.core.v1.ServicePort":              {"port"},
	"podline.core.v1.Taint":                    {"key", "effect"},
	"podline.core.v1.NodeAddress":              {"type", "address"},
	"podline.core.v1.PodCondition":             {"type", "status"},
	"podline.core.v1.NodeCondition":            {"type", "status"},
	"podline.apps.v1.DeploymentSpec":           {"selector", "template"},
	"podline.apps.v1.ReplicaSetSpec":           {"selector"},
	"podline.apps.v1.DeploymentCondition":      {"type", "status"},
	"podline.discovery.v1.EndpointSlice":       {"addressType", "endpoints"},
	"podline.discovery.v1.Endpoint":            {"addresses"},
	"podline.rbac.v1.PolicyRule":               {"verbs"},
	"podline.rbac.v1.RoleBinding":              {"roleRef"},
	"podline.rbac.v1.ClusterRoleBinding":       {"roleRef"},
	"podline.rbac.v1.RoleRef":                  {"apiGroup", "kind", "name"},
	"podline.rbac.v1.Subject":                  {"kind", "name"},
	"podline.meta.v1.OwnerReference":           {"apiVersion", "kind", "name", "uid"},
	"podline.meta.v1.LabelSelectorRequirement": {"key", "operator"},
	"podline.core.v1.ObjectFieldSelector":      {"fieldPath"},
	"podline.core.v1.KeyToPath":                {"key", "path"},
	"podline.core.v1.HTTPHeader":               {"name", "value"},
}

// descriptions of the kinds, as kubectl explain prints them.
var descriptions = map[protoreflect.FullName]string{
	"podline.core.v1.Pod":                "Pod is a collection of containers that can run on a host. This resource is created by clients and scheduled onto hosts.",
	"podline.core.v1.PodSpec":            "PodSpec is a description of a pod.",
	"podline.core.v1.Container":          "A single application container that you want to run within a pod.",
	"podline.core.v1.Node":               "Node is a worker node in Kubernetes. Each node will have a unique identifier in the cache (i.e. in etcd).",
	"podline.core.v1.Namespace":          "Namespace provides a scope for Names. Use of multiple namespaces is optional.",
	"podline.core.v1.Service":            "Service is a named abstraction of software service (for example, mysql) consisting of local port (for example 3306) that the proxy listens on, and the selector that determines which pods will answer requests sent through the proxy.",
	"podline.core.v1.Event":              "Event is a report of an event somewhere in the cluster.",
	"podline.core.v1.ConfigMap":          "ConfigMap holds configuration data for pods to consume.",
	"podline.core.v1.Secret":             "Secret holds secret data of a certain type. The total bytes of the values in the Data field must be less than MaxSecretSize bytes.",
	"podline.core.v1.ServiceAccount":     "ServiceAccount binds together: * a name, understood by users, and perhaps by peripheral systems, for an identity * a principal that can be authenticated and authorized * a set of secrets",
	"podline.apps.v1.Deployment":         "Deployment enables declarative updates for Pods and ReplicaSets.",
	"podline.apps.v1.ReplicaSet":         "ReplicaSet ensures that a specified number of pod replicas are running at any given time.",
	"podline.coordination.v1.Lease":      "Lease defines a lease concept.",
	"podline.discovery.v1.EndpointSlice": "EndpointSlice represents a set of service endpoints.",
	"podline.rbac.v1.Role":               "Role is a namespaced, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding.",
	"podline.rbac.v1.ClusterRole":        "ClusterRole is a cluster level, logical grouping of PolicyRules that can be referenced as a unit by a RoleBinding or ClusterRoleBinding.",
	"podline.rbac.v1.RoleBinding":        "RoleBinding references a role, but does not contain it.",
	"podline.rbac.v1.ClusterRoleBinding": "ClusterRoleBinding references a ClusterRole, but not contain it.",
	"podline.meta.v1.ObjectMeta":         "ObjectMeta is metadata that all persisted resources must have, which includes all objects users must create.",
}
