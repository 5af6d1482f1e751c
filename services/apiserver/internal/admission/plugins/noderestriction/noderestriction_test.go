package noderestriction

import (
	"context"
	"testing"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/request"
)

var (
	kubelet = &request.User{Name: "system:node:n1", Groups: []string{request.Nodes, request.AllAuthenticated}}
	admin   = &request.User{Name: "admin", Groups: []string{request.Masters}}
)

func res(group, name string) apis.Resource { r, _ := apis.Lookup(group, name); return r }

func mirror(node string) *corev1.Pod {
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Name: "etcd-" + node, Annotations: map[string]string{MirrorPodAnnotation: "abc"},
		OwnerReferences: []*metav1.OwnerReference{{Kind: "Node", Name: node, ApiVersion: "v1", Uid: "u"}}},
		Spec: &corev1.PodSpec{NodeName: node, Containers: []*corev1.Container{{Name: "c", Image: "i"}}}}
}

func node(name string, labels map[string]string, taints ...*corev1.Taint) *corev1.Node {
	return &corev1.Node{Metadata: &metav1.ObjectMeta{Name: name, Labels: labels}, Spec: &corev1.NodeSpec{Taints: taints}}
}

func TestNodeRestriction(t *testing.T) {
	plain := mirror("n1")
	plain.Metadata.Annotations = nil
	elsewhere := mirror("n2")
	withSecret := mirror("n1")
	withSecret.Spec.Volumes = []*corev1.Volume{{Name: "s", Secret: &corev1.SecretVolumeSource{SecretName: "x"}}}
	pods, nodes, leases := res("", "pods"), res("", "nodes"), res("coordination.k8s.io", "leases")
	for _, tc := range []struct {
		name     string
		user     *request.User
		op       admission.Operation
		res      apis.Resource
		sub      string
		obj, old object.Object
		msg      string // "" = admitted
	}{
		{"mirror pod on itself", kubelet, admission.Create, pods, "", mirror("n1"), nil, ""},
		{"ordinary pod", kubelet, admission.Create, pods, "", plain, nil,
			`pods "etcd-n1" is forbidden: pod does not have "kubernetes.io/config.mirror" annotation, node "n1" can only create mirror pods`},
		{"mirror pod on another node", kubelet, admission.Create, pods, "", elsewhere, nil,
			`pods "etcd-n2" is forbidden: node "n1" can only create pods with spec.nodeName set to itself`},
		{"mirror pod using a secret", kubelet, admission.Create, pods, "", withSecret, nil,
			`pods "etcd-n1" is forbidden: node "n1" can not create pods that reference secrets`},
		{"status of own pod", kubelet, admission.Update, pods, "status", mirror("n1"), mirror("n1"), ""},
		{"status of another node's pod", kubelet, admission.Update, pods, "status", elsewhere, elsewhere,
			`pods "etcd-n2" is forbidden: node "n1" can only update pod status for pods with spec.nodeName set to itself`},
		{"spec update of a pod", kubelet, admission.Update, pods, "", mirror("n1"), mirror("n1"),
			`pods "etcd-n1" is forbidden: unexpected operation "UPDATE", node "n1" can only create and delete mirror pods`},
		{"delete another node's pod", kubelet, admission.Delete, pods, "", nil, elsewhere,
			`pods "etcd-n2" is forbidden: node "n1" can only delete pods with spec.nodeName set to itself`},
		{"admin creates any pod", admin, admission.Create, pods, "", plain, nil, ""},
		{"no user", nil, admission.Create, pods, "", plain, nil, ""},
		{"register itself with allowed labels", kubelet, admission.Create, nodes, "", node("n1", map[string]string{
			"kubernetes.io/hostname": "n1", "node.kubernetes.io/exclude-from-external-load-balancers": "", "team": "a", "example.com/x": "y"}), nil, ""},
		{"register with a role label", kubelet, admission.Create, nodes, "", node("n1", map[string]string{
			"node-role.kubernetes.io/control-plane": "", "node-restriction.kubernetes.io/secure": "y"}), nil,
			`nodes "n1" is forbidden: node "n1" is not allowed to set the following labels: node-restriction.kubernetes.io/secure, node-role.kubernetes.io/control-plane`},
		{"another node", kubelet, admission.Update, nodes, "", node("n2", nil), node("n2", nil),
			`nodes "n2" is forbidden: node "n1" is not allowed to modify node "n2"`},
		{"keep an existing role label", kubelet, admission.Update, nodes, "",
			node("n1", map[string]string{"node-role.kubernetes.io/worker": "", "kubernetes.io/os": "linux"}),
			node("n1", map[string]string{"node-role.kubernetes.io/worker": ""}), ""},
		{"remove a role label", kubelet, admission.Update, nodes, "", node("n1", nil),
			node("n1", map[string]string{"node-role.kubernetes.io/worker": ""}),
			`nodes "n1" is forbidden: node "n1" is not allowed to modify labels: node-role.kubernetes.io/worker`},
		{"change taints", kubelet, admission.Update, nodes, "", node("n1", nil), node("n1", nil, &corev1.Taint{Key: "k", Effect: "NoSchedule"}),
			`nodes "n1" is forbidden: node "n1" is not allowed to modify taints`},
		{"own node status", kubelet, admission.Update, nodes, "status", node("n1", nil), node("n1", nil), ""},
		{"own lease", kubelet, admission.Update, leases, "", &coordinationv1.Lease{Metadata: &metav1.ObjectMeta{Name: "n1"}}, nil, ""},
		{"another node's lease", kubelet, admission.Update, leases, "", &coordinationv1.Lease{Metadata: &metav1.ObjectMeta{Name: "n2"}}, nil,
			`leases.coordination.k8s.io "n2" is forbidden: can only access node lease with the same name as the requesting node`},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ns, name := "", ""
			if tc.res.Namespaced {
				ns = "default"
				if tc.res.Kind == "Lease" {
					ns = "kube-node-lease"
				}
			}
			for _, o := range []object.Object{tc.obj, tc.old} {
				if o != nil {
					name = o.GetMetadata().GetName()
				}
			}
			a := &admission.Attributes{Operation: tc.op, Resource: tc.res, Subresource: tc.sub, Namespace: ns, Name: name,
				Object: tc.obj, OldObject: tc.old, User: tc.user}
			err := New().Validate(context.Background(), a)
			switch {
			case tc.msg == "" && err != nil:
				t.Fatalf("refused: %v", err)
			case tc.msg != "" && (!apierrors.IsForbidden(err) || err.Error() != tc.msg):
				t.Fatalf("err = %v\nwant 403 %s", err, tc.msg)
			}
		})
	}
}
