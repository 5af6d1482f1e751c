package node

import (
	"context"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// pods is an in-memory Graph.
type pods []*corev1.Pod

func (ps pods) Pod(ns, name string) (*corev1.Pod, bool) {
	for _, p := range ps {
		if p.GetMetadata().GetNamespace() == ns && p.GetMetadata().GetName() == name {
			return p, true
		}
	}
	return nil, false
}

func (ps pods) PodsOnNode(node string) []*corev1.Pod {
	var out []*corev1.Pod
	for _, p := range ps {
		if p.GetSpec().GetNodeName() == node {
			out = append(out, p)
		}
	}
	return out
}

// podBuilder builds test Pods: makePod("ns", "name").node("n1").secretVolume("s").obj().
type podBuilder struct{ p *corev1.Pod }

func makePod(ns, name string) *podBuilder {
	return &podBuilder{&corev1.Pod{Metadata: &metav1.ObjectMeta{Namespace: ns, Name: name}, Spec: &corev1.PodSpec{}}}
}
func (b *podBuilder) node(n string) *podBuilder { b.p.Spec.NodeName = n; return b }
func (b *podBuilder) secretVolume(s string) *podBuilder {
	b.p.Spec.Volumes = append(b.p.Spec.Volumes, &corev1.Volume{Name: s, Secret: &corev1.SecretVolumeSource{SecretName: s}})
	return b
}
func (b *podBuilder) configMapEnv(cm string) *podBuilder {
	b.p.Spec.Containers = append(b.p.Spec.Containers, &corev1.Container{Name: "c", EnvFrom: []*corev1.EnvFromSource{{ConfigMapRef: &corev1.ConfigMapEnvSource{Name: cm}}}})
	return b
}
func (b *podBuilder) obj() *corev1.Pod { return b.p }

func req(verb, group, resource, sub, ns, name string) authz.Attributes {
	return authz.Attributes{Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Namespace: ns, Name: name}
}

func TestNodeAuthorizer(t *testing.T) {
	z := New(pods{
		makePod("default", "mine").node("n1").secretVolume("db-pass").configMapEnv("settings").obj(),
		makePod("default", "theirs").node("n2").secretVolume("other-pass").obj(),
		makePod("default", "pending").obj(),
	})
	n1 := &request.User{Name: "system:node:n1", Groups: []string{request.Nodes, request.AllAuthenticated}}
	impostor := &request.User{Name: "system:node:n1"} // right name, not in system:nodes
	withSel := func(a authz.Attributes, sel string) authz.Attributes { a.FieldSelector = sel; return a }
	tests := []struct {
		name string
		user *request.User
		req  authz.Attributes
		want authz.Decision
	}{
		{"get own pod", n1, req("get", "", "pods", "", "default", "mine"), authz.Allow},
		{"get another node's pod", n1, req("get", "", "pods", "", "default", "theirs"), authz.NoOpinion},
		{"get an unscheduled pod", n1, req("get", "", "pods", "", "default", "pending"), authz.NoOpinion},
		{"get a missing pod (the registry answers 404)", n1, req("get", "", "pods", "", "default", "nope"), authz.Allow},
		{"delete another node's pod", n1, req("delete", "", "pods", "", "default", "theirs"), authz.NoOpinion},
		{"status of a missing pod", n1, req("update", "", "pods", "status", "default", "nope"), authz.NoOpinion},
		{"list pods without selector", n1, req("list", "", "pods", "", "", ""), authz.NoOpinion},
		{"list own pods by field selector", n1, withSel(req("list", "", "pods", "", "", ""), "spec.nodeName=n1"), authz.Allow},
		{"watch own pods, selector with ==", n1, withSel(req("watch", "", "pods", "", "", ""), "metadata.namespace=default,spec.nodeName==n1"), authz.Allow},
		{"watch another node's pods", n1, withSel(req("watch", "", "pods", "", "", ""), "spec.nodeName=n2"), authz.NoOpinion},
		{"not-equal selector is not own pods", n1, withSel(req("list", "", "pods", "", "", ""), "spec.nodeName!=n1"), authz.NoOpinion},
		{"update own pod status", n1, req("update", "", "pods", "status", "default", "mine"), authz.Allow},
		{"update another pod's status", n1, req("update", "", "pods", "status", "default", "theirs"), authz.NoOpinion},
		{"update own pod spec", n1, req("update", "", "pods", "", "default", "mine"), authz.NoOpinion},
		{"create a mirror pod", n1, req("create", "", "pods", "", "default", ""), authz.Allow},
		{"bind a pod", n1, req("create", "", "pods", "binding", "default", "pending"), authz.NoOpinion},
		{"secret used by own pod", n1, req("get", "", "secrets", "", "default", "db-pass"), authz.Allow},
		{"configmap used by own pod's env", n1, req("get", "", "configmaps", "", "default", "settings"), authz.Allow},
		{"secret used by another node's pod", n1, req("get", "", "secrets", "", "default", "other-pass"), authz.NoOpinion},
		{"secret of the same name in another namespace", n1, req("get", "", "secrets", "", "kube-system", "db-pass"), authz.NoOpinion},
		{"list secrets", n1, req("list", "", "secrets", "", "default", ""), authz.NoOpinion},
		{"update own node status", n1, req("update", "", "nodes", "status", "", "n1"), authz.Allow},
		{"update another node", n1, req("update", "", "nodes", "", "", "n2"), authz.NoOpinion},
		{"delete another node", n1, req("delete", "", "nodes", "", "", "n2"), authz.NoOpinion},
		{"read nodes", n1, req("list", "", "nodes", "", "", ""), authz.Allow},
		{"own lease", n1, req("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n1"), authz.Allow},
		{"another node's lease", n1, req("update", "coordination.k8s.io", "leases", "", "kube-node-lease", "n2"), authz.NoOpinion},
		{"lease outside kube-node-lease", n1, req("get", "coordination.k8s.io", "leases", "", "kube-system", "n1"), authz.NoOpinion},
		{"create events", n1, req("create", "", "events", "", "default", ""), authz.Allow},
		{"delete events", n1, req("delete", "", "events", "", "default", "e"), authz.NoOpinion},
		{"read services", n1, req("list", "", "services", "", "", ""), authz.Allow},
		{"review a token (webhook authentication)", n1, req("create", "authentication.k8s.io", "tokenreviews", "", "", ""), authz.Allow},
		{"review access (webhook authorization)", n1, req("create", "authorization.k8s.io", "subjectaccessreviews", "", "", ""), authz.Allow},
		{"token of own pod's account", n1, req("create", "", "serviceaccounts", "token", "default", "default"), authz.Allow},
		{"token of an account no pod of the node runs as", n1, req("create", "", "serviceaccounts", "token", "kube-system", "default"), authz.NoOpinion},
		{"deployments are not the node's", n1, req("get", "apps", "deployments", "", "default", "web"), authz.NoOpinion},
		{"not in system:nodes", impostor, req("get", "", "pods", "", "default", "mine"), authz.NoOpinion},
		{"not a node", &request.User{Name: "alice", Groups: []string{request.Nodes}}, req("get", "", "pods", "", "default", "mine"), authz.NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.req
			a.User = tt.user
			got, reason, err := z.Authorize(context.Background(), a)
			if err != nil || got != tt.want {
				t.Fatalf("Authorize = %v (%q), %v; want %v", got, reason, err, tt.want)
			}
		})
	}
}

func TestNoRelationshipMessage(t *testing.T) {
	z := New(pods{makePod("default", "theirs").node("n2").obj()})
	a := req("get", "", "pods", "", "default", "theirs")
	a.User = &request.User{Name: "system:node:n1", Groups: []string{request.Nodes}}
	err := authz.Check(context.Background(), z, a)
	want := `pods "theirs" is forbidden: User "system:node:n1" cannot get resource "pods" in API group "" in the namespace "default": no relationship found between node 'n1' and this object`
	if err == nil || err.Error() != want {
		t.Fatalf("got %v\nwant %s", err, want)
	}
}

func TestNodeServiceAccountTokens(t *testing.T) {
	withSA := makePod("default", "builder-pod").node("n1").obj()
	withSA.Spec.ServiceAccountName = "builder"
	z := New(pods{withSA, makePod("default", "plain").node("n1").obj(), makePod("prod", "other").node("n2").obj()})
	n1 := &request.User{Name: "system:node:n1", Groups: []string{request.Nodes}}
	tests := []struct {
		name string
		req  authz.Attributes
		want authz.Decision
	}{
		{"account of a pod on the node", req("create", "", "serviceaccounts", "token", "default", "builder"), authz.Allow},
		{"default account of a pod without one", req("create", "", "serviceaccounts", "token", "default", "default"), authz.Allow},
		{"account of another node's pod", req("create", "", "serviceaccounts", "token", "prod", "default"), authz.NoOpinion},
		{"reading the account itself", req("get", "", "serviceaccounts", "", "default", "builder"), authz.NoOpinion},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			a := tt.req
			a.User = n1
			if got, reason, _ := z.Authorize(context.Background(), a); got != tt.want {
				t.Fatalf("Authorize = %v (%q), want %v", got, reason, tt.want)
			}
		})
	}
}
