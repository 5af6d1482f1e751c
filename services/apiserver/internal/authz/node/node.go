package node

import (
	"context"
	"fmt"
	"strings"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// NodeLeaseNamespace holds the kubelets' heartbeat Leases.
const NodeLeaseNamespace = "kube-node-lease"

// Graph answers which Pods are bound to a node.
type Graph interface {
	// Pod returns a Pod.
	Pod(namespace, name string) (*corev1.Pod, bool)
	// PodsOnNode returns the Pods whose spec.nodeName is node.
	PodsOnNode(node string) []*corev1.Pod
}

// Authorizer is the Node authorizer.
type Authorizer struct{ graph Graph }

var _ authz.Authorizer = (*Authorizer)(nil)

// New reads relationships from g.
func New(g Graph) *Authorizer { return &Authorizer{graph: g} }

// NodeName returns the node a user is the kubelet of, if it is one.
func NodeName(u *request.User) (string, bool) {
	if u == nil || !u.InGroup(request.Nodes) || !strings.HasPrefix(u.Name, request.NodeUserPrefix) {
		return "", false
	}
	name := strings.TrimPrefix(u.Name, request.NodeUserPrefix)
	return name, name != ""
}

func noRelationship(node string) string {
	return fmt.Sprintf("no relationship found between node '%s' and this object", node)
}

// Authorize implements authz.Authorizer.
func (z *Authorizer) Authorize(_ context.Context, a authz.Attributes) (authz.Decision, string, error) {
	node, ok := NodeName(a.User)
	if !ok || !a.ResourceRequest {
		return authz.NoOpinion, "", nil
	}
	switch a.APIGroup + "/" + a.Resource {
	case "/pods":
		return z.pods(node, a)
	case "/nodes":
		return nodes(node, a)
	case "coordination.k8s.io/leases":
		return leases(node, a)
	case "/events", "events.k8s.io/events":
		return allowIf(a.Subresource == "" && isOneOf(a.Verb, "create", "update", "patch"), "")
	case "/services", "/endpoints", "discovery.k8s.io/endpointslices":
		return allowIf(a.Subresource == "" && isOneOf(a.Verb, "get", "list", "watch"), "")
	case "/secrets", "/configmaps", "/persistentvolumeclaims":
		return z.referenced(node, a)
	case "/serviceaccounts":
		return z.serviceAccountToken(node, a)
	case "authorization.k8s.io/subjectaccessreviews", "authentication.k8s.io/tokenreviews":
		// The kubelet's Webhook authentication and authorization of its
		// own API.
		return allowIf(a.Subresource == "" && a.Verb == "create", "")
	}
	return authz.NoOpinion, "", nil
}

func allowIf(ok bool, reason string) (authz.Decision, string, error) {
	if ok {
		return authz.Allow, "", nil
	}
	return authz.NoOpinion, reason, nil
}

func isOneOf(v string, set ...string) bool {
	for _, s := range set {
		if v == s {
			return true
		}
	}
	return false
}

func (z *Authorizer) pods(node string, a authz.Attributes) (authz.Decision, string, error) {
	switch {
	case a.Subresource == "" && isOneOf(a.Verb, "list", "watch"):
		return allowIf(selectsNode(a.FieldSelector, node), "can only list/watch pods with spec.nodeName="+node+" field selector")
	case a.Subresource == "" && a.Verb == "create":
		// Mirror pods of static pods; admission checks they are bound here.
		return authz.Allow, "", nil
	case a.Subresource == "" && isOneOf(a.Verb, "get", "delete"):
		// A Pod that does not exist is the registry's to answer with 404:
		// the kubelet reads and deletes mirror Pods by name and recreates
		// them when they are gone.
		p, ok := z.graph.Pod(a.Namespace, a.Name)
		return allowIf(!ok || p.GetSpec().GetNodeName() == node, noRelationship(node))
	case a.Subresource == "status" && isOneOf(a.Verb, "get", "update", "patch"):
		p, ok := z.graph.Pod(a.Namespace, a.Name)
		return allowIf(ok && p.GetSpec().GetNodeName() == node, noRelationship(node))
	}
	return authz.NoOpinion, "", nil
}

// selectsNode reports whether a field selector requires spec.nodeName=node.
func selectsNode(selector, node string) bool {
	for _, term := range strings.Split(selector, ",") {
		k, v, ok := strings.Cut(strings.TrimSpace(term), "=")
		v = strings.TrimPrefix(v, "=") // "==" is "=" too
		if ok && strings.TrimSpace(k) == "spec.nodeName" && strings.TrimSpace(v) == node {
			return true
		}
	}
	return false
}

func nodes(node string, a authz.Attributes) (authz.Decision, string, error) {
	switch {
	case a.Subresource == "" && isOneOf(a.Verb, "get", "list", "watch", "create"):
		// Creation of another node's object is NodeRestriction's to refuse.
		return authz.Allow, "", nil
	case isOneOf(a.Subresource, "", "status") && isOneOf(a.Verb, "update", "patch", "delete"):
		return allowIf(a.Name == node, noRelationship(node))
	}
	return authz.NoOpinion, "", nil
}

func leases(node string, a authz.Attributes) (authz.Decision, string, error) {
	if a.Subresource != "" || !isOneOf(a.Verb, "get", "create", "update", "patch", "delete") {
		return authz.NoOpinion, "", nil
	}
	if a.Namespace != NodeLeaseNamespace {
		return authz.NoOpinion, "can only access leases in the " + NodeLeaseNamespace + " namespace", nil
	}
	// A create names its object in the body, which NodeRestriction checks.
	return allowIf(a.Verb == "create" || a.Name == node, "can only access node lease with the same name as the requesting node")
}

// referenced allows a get of a Secret, ConfigMap or PVC a Pod on the node uses.
func (z *Authorizer) referenced(node string, a authz.Attributes) (authz.Decision, string, error) {
	if a.Subresource != "" || a.Verb != "get" || a.Name == "" {
		return authz.NoOpinion, noRelationship(node), nil
	}
	for _, p := range z.graph.PodsOnNode(node) {
		if p.GetMetadata().GetNamespace() != a.Namespace {
			continue
		}
		refs := References(p)
		if refs[a.Resource][a.Name] {
			return authz.Allow, "", nil
		}
	}
	return authz.NoOpinion, noRelationship(node), nil
}

// serviceAccountToken allows a TokenRequest for an account a Pod on the
// node runs as (the token the kubelet mounts into it).
func (z *Authorizer) serviceAccountToken(node string, a authz.Attributes) (authz.Decision, string, error) {
	if a.Subresource != "token" || a.Verb != "create" {
		return authz.NoOpinion, "", nil
	}
	for _, p := range z.graph.PodsOnNode(node) {
		sa := p.GetSpec().GetServiceAccountName()
		if sa == "" {
			sa = "default"
		}
		if p.GetMetadata().GetNamespace() == a.Namespace && sa == a.Name {
			return authz.Allow, "", nil
		}
	}
	return authz.NoOpinion, noRelationship(node), nil
}
