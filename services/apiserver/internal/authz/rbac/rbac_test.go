package rbac

import (
	"context"
	"testing"

	metav1 "podline.dev/proto/meta/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

func res(verb, group, resource, sub, ns, name string) authz.Attributes {
	return authz.Attributes{Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func TestRuleAllows(t *testing.T) {
	tests := []struct {
		name string
		rule *rbacv1.PolicyRule
		req  authz.Attributes
		want bool
	}{
		{"exact verb, group, resource", rule([]string{"get"}, core, []string{"pods"}), res("get", "", "pods", "", "default", "web"), true},
		{"other verb", rule([]string{"get"}, core, []string{"pods"}), res("delete", "", "pods", "", "default", "web"), false},
		{"other group", rule([]string{"get"}, core, []string{"deployments"}), res("get", "apps", "deployments", "", "default", "web"), false},
		{"wildcards", rule(anyVerb, []string{All}, []string{All}), res("patch", "apps", "deployments", "scale", "", "x"), true},
		{"resource does not cover its subresource", rule([]string{"update"}, core, []string{"pods"}), res("update", "", "pods", "status", "default", "web"), false},
		{"res/sub covers the subresource", rule([]string{"update"}, core, []string{"pods/status"}), res("update", "", "pods", "status", "default", "web"), true},
		{"*/sub covers any resource's subresource", rule([]string{"update"}, core, []string{"*/status"}), res("update", "", "nodes", "status", "", "n1"), true},
		{"res/sub does not cover the resource", rule([]string{"update"}, core, []string{"pods/status"}), res("update", "", "pods", "", "default", "web"), false},
		{"resourceNames match", &rbacv1.PolicyRule{Verbs: []string{"get"}, ApiGroups: core, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "ns", "a"), true},
		{"resourceNames other name", &rbacv1.PolicyRule{Verbs: []string{"get"}, ApiGroups: core, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("get", "", "configmaps", "", "ns", "b"), false},
		{"resourceNames never cover list", &rbacv1.PolicyRule{Verbs: []string{"list"}, ApiGroups: core, Resources: []string{"configmaps"}, ResourceNames: []string{"a"}}, res("list", "", "configmaps", "", "ns", ""), false},
		{"nonResourceURL exact", urls([]string{"get"}, "/healthz"), authz.Attributes{Verb: "get", Path: "/healthz"}, true},
		{"nonResourceURL prefix star", urls([]string{"get"}, "/apis/*"), authz.Attributes{Verb: "get", Path: "/apis/apps/v1"}, true},
		{"nonResourceURL no prefix without star", urls([]string{"get"}, "/api"), authz.Attributes{Verb: "get", Path: "/api/v1"}, false},
		{"nonResourceURL rule does not cover resources", urls(anyVerb, All), res("get", "", "pods", "", "default", ""), false},
		{"resource rule does not cover paths", rule(anyVerb, []string{All}, []string{All}), authz.Attributes{Verb: "get", Path: "/version"}, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := RuleAllows(tt.req, tt.rule); got != tt.want {
				t.Fatalf("RuleAllows = %v, want %v", got, tt.want)
			}
		})
	}
}

func meta(ns, name string) *metav1.ObjectMeta { return &metav1.ObjectMeta{Namespace: ns, Name: name} }

func TestAuthorizer(t *testing.T) {
	l := &StaticLister{
		RoleList: []*rbacv1.Role{
			{Metadata: meta("dev", "pod-reader"), Rules: []*rbacv1.PolicyRule{rule(read, core, []string{"pods"})}},
			{Metadata: meta("other", "pod-writer"), Rules: []*rbacv1.PolicyRule{rule(anyVerb, core, []string{"pods"})}},
		},
		ClusterRoleList: []*rbacv1.ClusterRole{
			{Metadata: meta("", "secret-reader"), Rules: []*rbacv1.PolicyRule{rule([]string{"get"}, core, []string{"secrets"})}},
			{Metadata: meta("", "node-viewer"), Rules: []*rbacv1.PolicyRule{rule(read, core, []string{"nodes"})}},
		},
		RoleBindingList: []*rbacv1.RoleBinding{
			{Metadata: meta("dev", "alice-reads"), Subjects: []*rbacv1.Subject{user("alice")}, RoleRef: &rbacv1.RoleRef{Kind: RoleKind, Name: "pod-reader"}},
			// A RoleBinding to a ClusterRole grants it in the binding's namespace only.
			{Metadata: meta("dev", "devs-secrets"), Subjects: []*rbacv1.Subject{group("devs")}, RoleRef: &rbacv1.RoleRef{Kind: ClusterRoleKind, Name: "secret-reader"}},
			{Metadata: meta("dev", "sa"), Subjects: []*rbacv1.Subject{{Kind: ServiceAccountKind, Name: "builder"}}, RoleRef: &rbacv1.RoleRef{Kind: RoleKind, Name: "pod-reader"}},
			// A Role of another namespace is never found through this binding.
			{Metadata: meta("dev", "cross"), Subjects: []*rbacv1.Subject{user("bob")}, RoleRef: &rbacv1.RoleRef{Kind: RoleKind, Name: "pod-writer"}},
		},
		ClusterRoleBindingList: []*rbacv1.ClusterRoleBinding{
			{Metadata: meta("", "ops-nodes"), Subjects: []*rbacv1.Subject{group("ops")}, RoleRef: &rbacv1.RoleRef{Kind: ClusterRoleKind, Name: "node-viewer"}},
		},
	}
	z := New(l)
	alice := &request.User{Name: "alice", Groups: []string{"devs"}}
	builder := &request.User{Name: "system:serviceaccount:dev:builder"}
	otherBuilder := &request.User{Name: "system:serviceaccount:prod:builder"}
	tests := []struct {
		name string
		user *request.User
		req  authz.Attributes
		want authz.Decision
	}{
		{"role binding grants in its namespace", alice, res("list", "", "pods", "", "dev", ""), authz.Allow},
		{"not in another namespace", alice, res("list", "", "pods", "", "prod", ""), authz.NoOpinion},
		{"not verbs the role lacks", alice, res("create", "", "pods", "", "dev", ""), authz.NoOpinion},
		{"group subject via cluster role in namespace", alice, res("get", "", "secrets", "", "dev", "s"), authz.Allow},
		{"cluster role through role binding is namespaced", alice, res("get", "", "secrets", "", "prod", "s"), authz.NoOpinion},
		{"service account subject defaults to binding namespace", builder, res("watch", "", "pods", "", "dev", ""), authz.Allow},
		{"same account name, other namespace", otherBuilder, res("watch", "", "pods", "", "dev", ""), authz.NoOpinion},
		{"role of another namespace is not resolved", &request.User{Name: "bob"}, res("create", "", "pods", "", "dev", ""), authz.NoOpinion},
		{"cluster role binding applies cluster-wide", &request.User{Name: "carol", Groups: []string{"ops"}}, res("list", "", "nodes", "", "", ""), authz.Allow},
		{"no user", nil, res("get", "", "pods", "", "dev", ""), authz.NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.req
			a.User = tt.user
			got, reason, err := z.Authorize(context.Background(), a)
			if err != nil || got != tt.want {
				t.Fatalf("Authorize = %v (%q), %v; want %v", got, reason, err, tt.want)
			}
			if got == authz.Allow && reason == "" {
				t.Fatal("an allow names the binding that allowed it")
			}
		})
	}
}

func TestRulesFor(t *testing.T) {
	l := &StaticLister{
		RoleList:               []*rbacv1.Role{{Metadata: meta("dev", "pod-reader"), Rules: []*rbacv1.PolicyRule{rule(read, core, []string{"pods"})}}},
		ClusterRoleList:        []*rbacv1.ClusterRole{{Metadata: meta("", "node-viewer"), Rules: []*rbacv1.PolicyRule{rule(read, core, []string{"nodes"})}}},
		RoleBindingList:        []*rbacv1.RoleBinding{{Metadata: meta("dev", "b"), Subjects: []*rbacv1.Subject{user("alice")}, RoleRef: &rbacv1.RoleRef{Kind: RoleKind, Name: "pod-reader"}}},
		ClusterRoleBindingList: []*rbacv1.ClusterRoleBinding{{Metadata: meta("", "c"), Subjects: []*rbacv1.Subject{group("devs")}, RoleRef: &rbacv1.RoleRef{Kind: ClusterRoleKind, Name: "node-viewer"}}},
	}
	alice := &request.User{Name: "alice", Groups: []string{"devs"}}
	z := New(l)
	if got := z.RulesFor(alice, "dev"); len(got) != 2 {
		t.Fatalf("in dev: %v", got)
	}
	if got := z.RulesFor(alice, "prod"); len(got) != 1 || got[0].GetResources()[0] != "nodes" {
		t.Fatalf("in prod: %v", got)
	}
	if got := z.RulesFor(&request.User{Name: "bob"}, "dev"); len(got) != 0 {
		t.Fatalf("bob: %v", got)
	}
}

func TestBootstrapPolicy(t *testing.T) {
	p := Bootstrap()
	z := New(&StaticLister{ClusterRoleList: p.ClusterRoles, ClusterRoleBindingList: p.ClusterRoleBindings})
	anon := &request.User{Name: request.Anonymous, Groups: []string{request.AllUnauthenticated}}
	someone := &request.User{Name: "someone", Groups: []string{request.AllAuthenticated}}
	admin := &request.User{Name: "kubernetes-admin", Groups: []string{request.Masters, request.AllAuthenticated}}
	sched := &request.User{Name: "system:kube-scheduler", Groups: []string{request.AllAuthenticated}}
	kcm := &request.User{Name: "system:kube-controller-manager", Groups: []string{request.AllAuthenticated}}
	node := &request.User{Name: "system:node:n1", Groups: []string{request.Nodes, request.AllAuthenticated}}
	prometheus := &request.User{Name: "prometheus", Groups: []string{MonitoringGroup, request.AllAuthenticated}}
	path := func(p string) authz.Attributes { return authz.Attributes{Verb: "get", Path: p} }
	tests := []struct {
		name string
		user *request.User
		req  authz.Attributes
		want authz.Decision
	}{
		{"anonymous reads healthz", anon, path("/healthz"), authz.Allow},
		{"anonymous cannot discover", anon, path("/apis"), authz.NoOpinion},
		{"authenticated users discover", someone, path("/apis/apps/v1"), authz.Allow},
		{"authenticated users cannot list pods", someone, res("list", "", "pods", "", "default", ""), authz.NoOpinion},
		{"system:masters can do anything", admin, res("delete", "apps", "deployments", "", "kube-system", "x"), authz.Allow},
		{"scheduler binds pods", sched, res("create", "", "pods", "binding", "default", "web"), authz.Allow},
		{"scheduler updates its own lease", sched, res("update", "coordination.k8s.io", "leases", "", "kube-system", "kube-scheduler"), authz.Allow},
		{"scheduler cannot take the controller-manager's lease", sched, res("update", "coordination.k8s.io", "leases", "", "kube-system", "kube-controller-manager"), authz.NoOpinion},
		{"scheduler cannot create deployments", sched, res("create", "apps", "deployments", "", "default", ""), authz.NoOpinion},
		{"controller-manager creates replicasets", kcm, res("create", "apps", "replicasets", "", "default", ""), authz.Allow},
		{"controller-manager writes endpoints", kcm, res("update", "", "endpoints", "", "default", "web"), authz.Allow},
		{"controller-manager deletes endpoints", kcm, res("delete", "", "endpoints", "", "default", "web"), authz.Allow},
		{"controller-manager cannot write RBAC", kcm, res("create", GroupName, "clusterrolebindings", "", "", ""), authz.NoOpinion},
		{"nodes get nothing from the empty system:node binding", node, res("list", "", "services", "", "", ""), authz.NoOpinion},
		{"nodes cannot review tokens by RBAC (the Node authorizer allows it)", node, res("create", "authentication.k8s.io", "tokenreviews", "", "", ""), authz.NoOpinion},
		{"system:monitoring reads /metrics", prometheus, path("/metrics"), authz.Allow},
		{"system:monitoring reads each readyz check", prometheus, path("/readyz/etcd"), authz.Allow},
		{"authenticated users cannot read /metrics", someone, path("/metrics"), authz.NoOpinion},
		{"the scheduler reviews tokens", sched, res("create", "authentication.k8s.io", "tokenreviews", "", "", ""), authz.Allow},
		{"the scheduler reviews access", sched, res("create", "authorization.k8s.io", "subjectaccessreviews", "", "", ""), authz.Allow},
		{"authenticated users cannot review tokens", someone, res("create", "authentication.k8s.io", "tokenreviews", "", "", ""), authz.NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.req
			a.User = tt.user
			if got, reason, _ := z.Authorize(context.Background(), a); got != tt.want {
				t.Fatalf("Authorize = %v (%q), want %v", got, reason, tt.want)
			}
		})
	}
}
