package rbac

import (
	"podline.dev/pkg/pki"
	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/internal/request"
)

// Names of the bootstrap roles (and of their bindings), as kube-apiserver's.
const (
	ClusterAdmin          = "cluster-admin"
	Discovery             = "system:discovery"
	PublicInfoViewer      = "system:public-info-viewer"
	BasicUser             = "system:basic-user"
	KubeScheduler         = "system:kube-scheduler"
	KubeControllerManager = "system:kube-controller-manager"
	Node                  = "system:node"
	KubeletAPIAdmin       = "system:kubelet-api-admin"
	// AuthDelegator may ask who a token is and what a user may do, as
	// servers that delegate their authentication and authorization to the
	// apiserver do (bound to their own accounts; no default binding).
	AuthDelegator = "system:auth-delegator"
	// Monitoring may read the metrics and health paths of the apiserver
	// and of the components that delegate authorization to it; bound to
	// the group of the same name.
	Monitoring = "system:monitoring"
	// APIServerKubeletClient is kubeadm's binding of the apiserver's
	// kubelet client identity to KubeletAPIAdmin.
	APIServerKubeletClient = "kubeadm:apiserver-kubelet-client"
)

// MonitoringGroup is the group Monitoring is bound to (Kubernetes'
// user.MonitoringGroup).
const MonitoringGroup = "system:monitoring"

// Policy is the default roles and bindings created at start.
type Policy struct {
	ClusterRoles        []*rbacv1.ClusterRole
	ClusterRoleBindings []*rbacv1.ClusterRoleBinding
}

func rule(verbs, groups, resources []string) *rbacv1.PolicyRule {
	return &rbacv1.PolicyRule{Verbs: verbs, ApiGroups: groups, Resources: resources}
}

func urls(verbs []string, paths ...string) *rbacv1.PolicyRule {
	return &rbacv1.PolicyRule{Verbs: verbs, NonResourceUrls: paths}
}

var (
	read      = []string{"get", "list", "watch"}
	write     = []string{"create", "update", "patch", "delete"}
	core      = []string{""}
	anyVerb   = []string{All}
	eventsAPI = []string{"", "events.k8s.io"}
)

// bootstrapMeta marks an object as part of the default policy, as
// Kubernetes does, so readers can tell it from users' roles.
func bootstrapMeta(name string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{
		Name:        name,
		Labels:      map[string]string{"kubernetes.io/bootstrapping": "rbac-defaults"},
		Annotations: map[string]string{"rbac.authorization.kubernetes.io/autoupdate": "true"},
	}
}

func clusterRole(name string, rules ...*rbacv1.PolicyRule) *rbacv1.ClusterRole {
	return &rbacv1.ClusterRole{ApiVersion: GroupName + "/v1", Kind: "ClusterRole", Metadata: bootstrapMeta(name), Rules: rules}
}

func binding(name string, subjects ...*rbacv1.Subject) *rbacv1.ClusterRoleBinding {
	return &rbacv1.ClusterRoleBinding{
		ApiVersion: GroupName + "/v1", Kind: "ClusterRoleBinding", Metadata: bootstrapMeta(name),
		RoleRef: &rbacv1.RoleRef{ApiGroup: GroupName, Kind: ClusterRoleKind, Name: name}, Subjects: subjects,
	}
}

func group(name string) *rbacv1.Subject {
	return &rbacv1.Subject{Kind: GroupKind, ApiGroup: GroupName, Name: name}
}

func user(name string) *rbacv1.Subject {
	return &rbacv1.Subject{Kind: UserKind, ApiGroup: GroupName, Name: name}
}

// NodeRules are what a kubelet may do by role; the Node authorizer narrows
// reads and writes of pods, nodes, leases, secrets and configmaps to the
// node's own objects.
func NodeRules() []*rbacv1.PolicyRule {
	return []*rbacv1.PolicyRule{
		rule(append([]string{"create"}, read...), core, []string{"nodes"}),
		rule([]string{"update", "patch"}, core, []string{"nodes/status"}),
		rule([]string{"update", "patch", "delete"}, core, []string{"nodes"}),
		rule([]string{"create", "update", "patch"}, eventsAPI, []string{"events"}),
		rule(read, core, []string{"pods", "services", "endpoints"}),
		rule([]string{"create", "delete"}, core, []string{"pods"}),
		rule([]string{"update", "patch"}, core, []string{"pods/status"}),
		rule([]string{"get"}, core, []string{"secrets", "configmaps", "persistentvolumeclaims"}),
		rule(append([]string{"create", "update", "patch", "delete"}, "get"), []string{"coordination.k8s.io"}, []string{"leases"}),
		// The kubelet asks who is calling its own API (token webhook
		// authentication) and what they may do (Webhook authorization).
		rule([]string{"create"}, []string{"authentication.k8s.io"}, []string{"tokenreviews"}),
		rule([]string{"create"}, []string{"authorization.k8s.io"}, []string{"subjectaccessreviews"}),
		// The tokens of its Pods' projected volumes (TokenRequest).
		rule([]string{"create"}, core, []string{"serviceaccounts/token"}),
	}
}

// Bootstrap is kube-apiserver's default policy for the parts podline runs.
func Bootstrap() Policy {
	return Policy{
		ClusterRoles: []*rbacv1.ClusterRole{
			clusterRole(ClusterAdmin, rule(anyVerb, []string{All}, []string{All}), urls(anyVerb, All)),
			clusterRole(Discovery, urls([]string{"get"},
				"/api", "/api/*", "/apis", "/apis/*", "/healthz", "/livez", "/readyz", "/version", "/version/", "/openapi", "/openapi/*")),
			clusterRole(Monitoring, urls([]string{"get"},
				"/metrics", "/livez", "/readyz", "/healthz", "/livez/*", "/readyz/*", "/healthz/*")),
			clusterRole(PublicInfoViewer, urls([]string{"get"}, "/healthz", "/livez", "/readyz", "/version", "/version/")),
			clusterRole(BasicUser,
				rule([]string{"create"}, []string{"authorization.k8s.io"}, []string{"selfsubjectaccessreviews", "selfsubjectrulesreviews"}),
				rule([]string{"create"}, []string{"authentication.k8s.io"}, []string{"selfsubjectreviews"})),
			clusterRole(KubeScheduler,
				rule([]string{"create", "patch", "update"}, eventsAPI, []string{"events"}),
				rule([]string{"create"}, []string{"coordination.k8s.io"}, []string{"leases"}),
				&rbacv1.PolicyRule{Verbs: []string{"get", "update"}, ApiGroups: []string{"coordination.k8s.io"}, Resources: []string{"leases"}, ResourceNames: []string{"kube-scheduler"}},
				rule(read, core, []string{"nodes", "namespaces", "services", "replicationcontrollers", "persistentvolumeclaims", "persistentvolumes"}),
				rule(append([]string{"delete"}, read...), core, []string{"pods"}),
				rule([]string{"create"}, core, []string{"bindings", "pods/binding"}),
				rule([]string{"patch", "update"}, core, []string{"pods/status"}),
				rule(read, []string{"apps"}, []string{"replicasets", "statefulsets"}),
				rule(read, []string{"policy"}, []string{"poddisruptionbudgets"}),
				// Its secure port asks who a client is and what it may do.
				rule([]string{"create"}, []string{"authentication.k8s.io"}, []string{"tokenreviews"}),
				rule([]string{"create"}, []string{"authorization.k8s.io"}, []string{"subjectaccessreviews"}),
			),
			// podline's controller-manager runs every controller under its
			// own identity (as kube-controller-manager does without
			// --use-service-account-credentials), so its role is the union
			// of the controllers' roles: the namespace controller and the
			// garbage collector delete any namespaced object. RBAC objects
			// are read-only to it.
			clusterRole(KubeControllerManager,
				rule(anyVerb, []string{"", "apps", "discovery.k8s.io", "coordination.k8s.io", "events.k8s.io"}, []string{All}),
				// The garbage collector watches every resource, as
				// Kubernetes' does with list/watch on */*.
				rule(read, []string{All}, []string{All}),
			),
			clusterRole(Node, NodeRules()...),
			clusterRole(AuthDelegator,
				rule([]string{"create"}, []string{"authentication.k8s.io"}, []string{"tokenreviews"}),
				rule([]string{"create"}, []string{"authorization.k8s.io"}, []string{"subjectaccessreviews"})),
			// Full use of the kubelets' API: what the apiserver needs to
			// relay pods/log and pods/exec.
			clusterRole(KubeletAPIAdmin,
				rule(read, core, []string{"nodes"}),
				rule([]string{"proxy"}, core, []string{"nodes"}),
				rule(anyVerb, core, []string{"nodes/proxy", "nodes/log", "nodes/stats", "nodes/metrics"})),
		},
		ClusterRoleBindings: []*rbacv1.ClusterRoleBinding{
			binding(ClusterAdmin, group(request.Masters)),
			binding(Monitoring, group(MonitoringGroup)),
			binding(Discovery, group(request.AllAuthenticated)),
			binding(PublicInfoViewer, group(request.AllAuthenticated), group(request.AllUnauthenticated)),
			binding(BasicUser, group(request.AllAuthenticated)),
			binding(KubeScheduler, user(KubeScheduler)),
			binding(KubeControllerManager, user(KubeControllerManager)),
			// No subjects, as in Kubernetes: kubelets are authorized by the
			// Node authorizer, not by this binding.
			binding(Node),
			// kubeadm creates this binding at init; podline has no kubeadm,
			// so the apiserver creates it with the default policy.
			&rbacv1.ClusterRoleBinding{
				ApiVersion: GroupName + "/v1", Kind: "ClusterRoleBinding", Metadata: bootstrapMeta(APIServerKubeletClient),
				RoleRef:  &rbacv1.RoleRef{ApiGroup: GroupName, Kind: ClusterRoleKind, Name: KubeletAPIAdmin},
				Subjects: []*rbacv1.Subject{user(pki.APIServerKubeletClientUser)},
			},
		},
	}
}
