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
	"podline.core.v1.Endpoints.subsets":                      atomicList,
	"podline.core.v1.EndpointSubset.addresses":               atomicList,
	"podline.core.v1.EndpointSubset.not_ready_addresses":     atomicList,
	"podline.core.v1.EndpointSubset.ports":                   atomicList,
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
	"podline.core.v1.ResourceQuotaSpec.hard":          true,
	"podline.core.v1.ResourceQuotaStatus.hard":        true,
	"podline.core.v1.ResourceQuotaStatus.used":        true,
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
