// Package noderestriction is Kubernetes' NodeRestriction admission: a
// kubelet (user system:node:<name> in group system:nodes) may create only
// mirror pods bound to itself and delete or update the status of only the
// pods bound to itself; it may modify only its own Node (without changing
// its taints once registered) and only its own Lease; and it may set only
// the node labels Kubernetes lets kubelets set. Other users, and requests
// without a user (authentication off), pass.
package noderestriction

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/request"
)

// Name is the plugin's name in spans.
const Name = "NodeRestriction"

// MirrorPodAnnotation marks a kubelet's mirror of a static pod.
const MirrorPodAnnotation = "kubernetes.io/config.mirror"

// Plugin restricts what nodes may write.
type Plugin struct{}

var _ admission.Validator = Plugin{}

// New returns the plugin.
func New() Plugin { return Plugin{} }

// Name implements admission.Validator.
func (Plugin) Name() string { return Name }

// NodeName returns the node a user speaks for, if it is a node.
func NodeName(u *request.User) (string, bool) {
	if u == nil || !u.InGroup(request.Nodes) || !strings.HasPrefix(u.Name, request.NodeUserPrefix) {
		return "", false
	}
	n := strings.TrimPrefix(u.Name, request.NodeUserPrefix)
	return n, n != ""
}

// Validate implements admission.Validator.
func (Plugin) Validate(_ context.Context, a *admission.Attributes) error {
	node, ok := NodeName(a.User)
	if !ok || a.Resource.Group.Name != "" && a.Resource.Group.Name != "coordination.k8s.io" {
		return nil
	}
	switch a.Resource.Kind {
	case "Pod":
		return pod(a, node)
	case "Node":
		return nodeWrite(a, node)
	case "Lease":
		if a.Namespace == "kube-node-lease" && a.Name != node {
			return a.Forbidden("can only access node lease with the same name as the requesting node")
		}
	}
	return nil
}

func pod(a *admission.Attributes, node string) error {
	switch a.Operation {
	case admission.Create:
		if a.Subresource != "" {
			return nil
		}
		p := a.Object.(*corev1.Pod)
		if _, mirror := p.GetMetadata().GetAnnotations()[MirrorPodAnnotation]; !mirror {
			return a.Forbidden(fmt.Sprintf("pod does not have %q annotation, node %q can only create mirror pods", MirrorPodAnnotation, node))
		}
		if p.GetSpec().GetNodeName() != node {
			return a.Forbidden(fmt.Sprintf("node %q can only create pods with spec.nodeName set to itself", node))
		}
		for _, ref := range p.GetMetadata().GetOwnerReferences() {
			if ref.GetKind() != "Node" || ref.GetName() != node {
				return a.Forbidden(fmt.Sprintf("node %q can only create pods with an owner reference set to itself", node))
			}
		}
		if what := references(p.GetSpec()); what != "" {
			return a.Forbidden(fmt.Sprintf("node %q can not create pods that reference %s", node, what))
		}
	case admission.Update:
		if a.Subresource != "status" {
			return a.Forbidden(fmt.Sprintf("unexpected operation %q, node %q can only create and delete mirror pods", a.Operation, node))
		}
		if a.OldObject.(*corev1.Pod).GetSpec().GetNodeName() != node {
			return a.Forbidden(fmt.Sprintf("node %q can only update pod status for pods with spec.nodeName set to itself", node))
		}
	case admission.Delete:
		if a.OldObject.(*corev1.Pod).GetSpec().GetNodeName() != node {
			return a.Forbidden(fmt.Sprintf("node %q can only delete pods with spec.nodeName set to itself", node))
		}
	}
	return nil
}

// references names the first kind of object a mirror pod may not use.
func references(s *corev1.PodSpec) string {
	if s.GetServiceAccountName() != "" && s.GetServiceAccountName() != "default" {
		return "serviceaccounts"
	}
	for _, v := range s.GetVolumes() {
		switch {
		case v.GetSecret() != nil:
			return "secrets"
		case v.GetConfigMap() != nil:
			return "configmaps"
		case v.GetPersistentVolumeClaim() != nil:
			return "persistentvolumeclaims"
		}
	}
	for _, c := range append(append([]*corev1.Container(nil), s.GetInitContainers()...), s.GetContainers()...) {
		for _, e := range c.GetEnv() {
			switch {
			case e.GetValueFrom().GetSecretKeyRef() != nil:
				return "secrets"
			case e.GetValueFrom().GetConfigMapKeyRef() != nil:
				return "configmaps"
			}
		}
		for _, e := range c.GetEnvFrom() {
			switch {
			case e.GetSecretRef() != nil:
				return "secrets"
			case e.GetConfigMapRef() != nil:
				return "configmaps"
			}
		}
	}
	return ""
}

func nodeWrite(a *admission.Attributes, node string) error {
	if a.Name != node {
		return a.Forbidden(fmt.Sprintf("node %q is not allowed to modify node %q", node, a.Name))
	}
	if a.Object == nil || a.Subresource != "" {
		return nil
	}
	next := a.Object.(*corev1.Node)
	switch a.Operation {
	case admission.Create:
		if bad := forbiddenLabels(next.GetMetadata().GetLabels(), nil); len(bad) > 0 {
			return a.Forbidden(fmt.Sprintf("node %q is not allowed to set the following labels: %s", node, strings.Join(bad, ", ")))
		}
	case admission.Update:
		old := a.OldObject.(*corev1.Node)
		if bad := forbiddenLabels(next.GetMetadata().GetLabels(), old.GetMetadata().GetLabels()); len(bad) > 0 {
			return a.Forbidden(fmt.Sprintf("node %q is not allowed to modify labels: %s", node, strings.Join(bad, ", ")))
		}
		if !sameTaints(next.GetSpec().GetTaints(), old.GetSpec().GetTaints()) {
			return a.Forbidden(fmt.Sprintf("node %q is not allowed to modify taints", node))
		}
	}
	return nil
}

func sameTaints(a, b []*corev1.Taint) bool {
	return slices.EqualFunc(a, b, func(x, y *corev1.Taint) bool { return proto.Equal(x, y) })
}

// kubeletLabels are the kubernetes.io and k8s.io labels a kubelet may set.
var kubeletLabels = []string{
	"kubernetes.io/hostname", "kubernetes.io/arch", "kubernetes.io/os",
	"beta.kubernetes.io/instance-type", "node.kubernetes.io/instance-type",
	"failure-domain.beta.kubernetes.io/region", "failure-domain.beta.kubernetes.io/zone",
	"topology.kubernetes.io/region", "topology.kubernetes.io/zone",
	"beta.kubernetes.io/arch", "beta.kubernetes.io/os", "node.kubernetes.io/windows-build",
}

// kubeletPrefixes are label namespaces a kubelet may use freely.
var kubeletPrefixes = []string{"kubelet.kubernetes.io/", "node.kubernetes.io/"}

// AllowedLabel reports whether a kubelet may set the label key.
func AllowedLabel(key string) bool {
	if slices.Contains(kubeletLabels, key) {
		return true
	}
	for _, p := range kubeletPrefixes {
		if strings.HasPrefix(key, p) {
			return true
		}
	}
	i := strings.Index(key, "/")
	if i < 0 {
		return true
	}
	domain := key[:i]
	if domain == "node-restriction.kubernetes.io" || strings.HasSuffix(domain, ".node-restriction.kubernetes.io") {
		return false
	}
	for _, d := range []string{"kubernetes.io", "k8s.io"} {
		if domain == d || strings.HasSuffix(domain, "."+d) {
			return false
		}
	}
	return true
}

// forbiddenLabels lists, sorted, the labels in next a kubelet may not set
// that differ from old.
func forbiddenLabels(next, old map[string]string) []string {
	var bad []string
	seen := map[string]bool{}
	for _, m := range []map[string]string{next, old} {
		for k := range m {
			if seen[k] {
				continue
			}
			seen[k] = true
			nv, inNext := next[k]
			ov, inOld := old[k]
			if (inNext != inOld || nv != ov) && !AllowedLabel(k) {
				bad = append(bad, k)
			}
		}
	}
	sort.Strings(bad)
	return bad
}
