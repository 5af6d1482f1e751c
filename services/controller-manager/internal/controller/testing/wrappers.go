package testing

import (
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Builders of API objects for tests, in kube-scheduler's wrapper style:
// MakePod().Name("a").Node("n1").Ready().Obj().

func meta(name string) *metav1.ObjectMeta {
	return &metav1.ObjectMeta{Name: name, Namespace: "default", Uid: name + "-uid", ResourceVersion: "1",
		CreationTimestamp: &metav1.Time{Seconds: Epoch.Unix()}}
}

// Owner is an ownerReference to obj of the given apiVersion and kind, as a controller sets it.
func Owner(obj object.Object, apiVersion, kind string) *metav1.OwnerReference {
	return &metav1.OwnerReference{ApiVersion: apiVersion, Kind: kind, Name: obj.GetMetadata().GetName(),
		Uid: obj.GetMetadata().GetUid(), Controller: proto.Bool(true), BlockOwnerDeletion: proto.Bool(true)}
}

// ---------------------------------------------------------------- Pod

// PodWrapper builds a Pod.
type PodWrapper struct{ *corev1.Pod }

// MakePod is a pending pod "pod" in default with one container.
func MakePod() *PodWrapper {
	return &PodWrapper{&corev1.Pod{
		ApiVersion: "v1", Kind: "Pod",
		Metadata: meta("pod"),
		Spec:     &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: "web:1"}}},
		Status:   &corev1.PodStatus{Phase: "Pending"},
	}}
}

func (p *PodWrapper) Obj() *corev1.Pod { return p.Pod }

func (p *PodWrapper) Name(n string) *PodWrapper {
	p.Metadata.Name, p.Metadata.Uid = n, n+"-uid"
	return p
}
func (p *PodWrapper) Namespace(ns string) *PodWrapper { p.Metadata.Namespace = ns; return p }
func (p *PodWrapper) UID(u string) *PodWrapper        { p.Metadata.Uid = u; return p }
func (p *PodWrapper) Labels(l map[string]string) *PodWrapper {
	p.Metadata.Labels = l
	return p
}
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.Metadata.Labels == nil {
		p.Metadata.Labels = map[string]string{}
	}
	p.Metadata.Labels[k] = v
	return p
}
func (p *PodWrapper) OwnedBy(ref *metav1.OwnerReference) *PodWrapper {
	p.Metadata.OwnerReferences = append(p.Metadata.OwnerReferences, ref)
	return p
}
func (p *PodWrapper) Created(t time.Time) *PodWrapper {
	p.Metadata.CreationTimestamp = &metav1.Time{Seconds: t.Unix()}
	return p
}
func (p *PodWrapper) Node(n string) *PodWrapper { p.Spec.NodeName = n; return p }
func (p *PodWrapper) Phase(ph string) *PodWrapper {
	p.Status.Phase = ph
	return p
}
func (p *PodWrapper) IP(ip string) *PodWrapper { p.Status.PodIp = ip; return p }
func (p *PodWrapper) Terminating(t time.Time) *PodWrapper {
	p.Metadata.DeletionTimestamp = &metav1.Time{Seconds: t.Unix()}
	return p
}

// Ready makes the pod Running with Ready=True since t.
func (p *PodWrapper) Ready(since time.Time) *PodWrapper {
	p.Status.Phase = "Running"
	p.Status.Conditions = append(p.Status.Conditions, &corev1.PodCondition{Type: "Ready", Status: "True",
		LastTransitionTime: &metav1.Time{Seconds: since.Unix()}})
	return p
}
func (p *PodWrapper) ContainerPort(name string, port int32) *PodWrapper {
	p.Spec.Containers[0].Ports = append(p.Spec.Containers[0].Ports, &corev1.ContainerPort{Name: name, ContainerPort: port, Protocol: "TCP"})
	return p
}
func (p *PodWrapper) Toleration(key, effect string, seconds *int64) *PodWrapper {
	p.Spec.Tolerations = append(p.Spec.Tolerations, &corev1.Toleration{Key: key, Operator: "Exists", Effect: effect, TolerationSeconds: seconds})
	return p
}
func (p *PodWrapper) RestartCount(n int32) *PodWrapper {
	p.Status.ContainerStatuses = append(p.Status.ContainerStatuses, &corev1.ContainerStatus{Name: "web", RestartCount: n})
	return p
}

// ---------------------------------------------------------- Templates

// Template is a pod template with labels and one container of image.
func Template(labels map[string]string, image string) *corev1.PodTemplateSpec {
	return &corev1.PodTemplateSpec{
		Metadata: &metav1.ObjectMeta{Labels: labels},
		Spec:     &corev1.PodSpec{Containers: []*corev1.Container{{Name: "web", Image: image}}},
	}
}

// ------------------------------------------------------- ReplicaSet

// ReplicaSetWrapper builds a ReplicaSet.
type ReplicaSetWrapper struct{ *appsv1.ReplicaSet }

// MakeReplicaSet is "rs" in default selecting app=web, 1 replica of web:1.
func MakeReplicaSet() *ReplicaSetWrapper {
	sel := map[string]string{"app": "web"}
	md := meta("rs")
	md.Generation = 1
	return &ReplicaSetWrapper{&appsv1.ReplicaSet{
		ApiVersion: "apps/v1", Kind: "ReplicaSet",
		Metadata: md,
		Spec: &appsv1.ReplicaSetSpec{
			Replicas: proto.Int32(1),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: Template(sel, "web:1"),
		},
		Status: &appsv1.ReplicaSetStatus{},
	}}
}

func (r *ReplicaSetWrapper) Obj() *appsv1.ReplicaSet { return r.ReplicaSet }
func (r *ReplicaSetWrapper) Name(n string) *ReplicaSetWrapper {
	r.Metadata.Name, r.Metadata.Uid = n, n+"-uid"
	return r
}
func (r *ReplicaSetWrapper) UID(u string) *ReplicaSetWrapper { r.Metadata.Uid = u; return r }
func (r *ReplicaSetWrapper) Replicas(n int32) *ReplicaSetWrapper {
	r.Spec.Replicas = proto.Int32(n)
	return r
}
func (r *ReplicaSetWrapper) Selector(l map[string]string) *ReplicaSetWrapper {
	r.Spec.Selector = &metav1.LabelSelector{MatchLabels: l}
	r.Spec.Template.Metadata.Labels = l
	return r
}
func (r *ReplicaSetWrapper) Labels(l map[string]string) *ReplicaSetWrapper {
	r.Metadata.Labels = l
	return r
}
func (r *ReplicaSetWrapper) Template(t *corev1.PodTemplateSpec) *ReplicaSetWrapper {
	r.Spec.Template = t
	return r
}
func (r *ReplicaSetWrapper) Image(img string) *ReplicaSetWrapper {
	r.Spec.Template.Spec.Containers[0].Image = img
	return r
}
func (r *ReplicaSetWrapper) OwnedBy(ref *metav1.OwnerReference) *ReplicaSetWrapper {
	r.Metadata.OwnerReferences = append(r.Metadata.OwnerReferences, ref)
	return r
}
func (r *ReplicaSetWrapper) Annotation(k, v string) *ReplicaSetWrapper {
	if r.Metadata.Annotations == nil {
		r.Metadata.Annotations = map[string]string{}
	}
	r.Metadata.Annotations[k] = v
	return r
}
func (r *ReplicaSetWrapper) Created(t time.Time) *ReplicaSetWrapper {
	r.Metadata.CreationTimestamp = &metav1.Time{Seconds: t.Unix()}
	return r
}
func (r *ReplicaSetWrapper) Generation(g int64) *ReplicaSetWrapper {
	r.Metadata.Generation = g
	return r
}

// Status sets status replicas, ready and available, observed at the current generation.
func (r *ReplicaSetWrapper) Status(replicas, ready, available int32) *ReplicaSetWrapper {
	r.ReplicaSet.Status = &appsv1.ReplicaSetStatus{Replicas: replicas, FullyLabeledReplicas: replicas, ReadyReplicas: ready,
		AvailableReplicas: available, ObservedGeneration: r.Metadata.Generation}
	return r
}

// ------------------------------------------------------- Deployment

// DeploymentWrapper builds a Deployment.
type DeploymentWrapper struct{ *appsv1.Deployment }

// MakeDeployment is "web" in default selecting app=web, 3 replicas of
// web:1, RollingUpdate 25%/25%, revisionHistoryLimit 10, progress deadline 600 s.
func MakeDeployment() *DeploymentWrapper {
	md := meta("web")
	md.Generation = 1
	sel := map[string]string{"app": "web"}
	return &DeploymentWrapper{&appsv1.Deployment{
		ApiVersion: "apps/v1", Kind: "Deployment",
		Metadata: md,
		Spec: &appsv1.DeploymentSpec{
			Replicas: proto.Int32(3),
			Selector: &metav1.LabelSelector{MatchLabels: map[string]string{"app": "web"}},
			Template: Template(sel, "web:1"),
			Strategy: &appsv1.DeploymentStrategy{Type: "RollingUpdate", RollingUpdate: &appsv1.RollingUpdateDeployment{
				MaxSurge:       &metav1.IntOrString{Type: 1, StrVal: "25%"},
				MaxUnavailable: &metav1.IntOrString{Type: 1, StrVal: "25%"},
			}},
			RevisionHistoryLimit:    proto.Int32(10),
			ProgressDeadlineSeconds: proto.Int32(600),
		},
		Status: &appsv1.DeploymentStatus{},
	}}
}

func (d *DeploymentWrapper) Obj() *appsv1.Deployment { return d.Deployment }
func (d *DeploymentWrapper) Name(n string) *DeploymentWrapper {
	d.Metadata.Name, d.Metadata.Uid = n, n+"-uid"
	return d
}
func (d *DeploymentWrapper) Replicas(n int32) *DeploymentWrapper {
	d.Spec.Replicas = proto.Int32(n)
	return d
}
func (d *DeploymentWrapper) Image(img string) *DeploymentWrapper {
	d.Spec.Template.Spec.Containers[0].Image = img
	return d
}
func (d *DeploymentWrapper) Generation(g int64) *DeploymentWrapper {
	d.Metadata.Generation = g
	return d
}

// Rolling sets RollingUpdate with maxSurge and maxUnavailable as ints.
func (d *DeploymentWrapper) Rolling(maxSurge, maxUnavailable int32) *DeploymentWrapper {
	d.Spec.Strategy = &appsv1.DeploymentStrategy{Type: "RollingUpdate", RollingUpdate: &appsv1.RollingUpdateDeployment{
		MaxSurge:       &metav1.IntOrString{IntVal: maxSurge},
		MaxUnavailable: &metav1.IntOrString{IntVal: maxUnavailable},
	}}
	return d
}
func (d *DeploymentWrapper) Recreate() *DeploymentWrapper {
	d.Spec.Strategy = &appsv1.DeploymentStrategy{Type: "Recreate"}
	return d
}
func (d *DeploymentWrapper) Paused(p bool) *DeploymentWrapper { d.Spec.Paused = p; return d }
func (d *DeploymentWrapper) RevisionHistoryLimit(n int32) *DeploymentWrapper {
	d.Spec.RevisionHistoryLimit = proto.Int32(n)
	return d
}
func (d *DeploymentWrapper) ProgressDeadline(s int32) *DeploymentWrapper {
	d.Spec.ProgressDeadlineSeconds = proto.Int32(s)
	return d
}
func (d *DeploymentWrapper) Annotation(k, v string) *DeploymentWrapper {
	if d.Metadata.Annotations == nil {
		d.Metadata.Annotations = map[string]string{}
	}
	d.Metadata.Annotations[k] = v
	return d
}

// ---------------------------------------------------------- Service

// ServiceWrapper builds a Service.
type ServiceWrapper struct{ *corev1.Service }

// MakeService is "web" in default selecting app=web, port 80 -> 8080 TCP named http.
func MakeService() *ServiceWrapper {
	return &ServiceWrapper{&corev1.Service{
		ApiVersion: "v1", Kind: "Service",
		Metadata: meta("web"),
		Spec: &corev1.ServiceSpec{
			Selector: map[string]string{"app": "web"},
			Ports: []*corev1.ServicePort{{Name: "http", Protocol: "TCP", Port: 80,
				TargetPort: &metav1.IntOrString{IntVal: 8080}}},
		},
	}}
}

func (s *ServiceWrapper) Obj() *corev1.Service { return s.Service }
func (s *ServiceWrapper) Name(n string) *ServiceWrapper {
	s.Metadata.Name, s.Metadata.Uid = n, n+"-uid"
	return s
}
func (s *ServiceWrapper) Selector(l map[string]string) *ServiceWrapper {
	s.Spec.Selector = l
	return s
}

// NamedTargetPort makes the first port target a container port by name.
func (s *ServiceWrapper) NamedTargetPort(name string) *ServiceWrapper {
	s.Spec.Ports[0].TargetPort = &metav1.IntOrString{Type: 1, StrVal: name}
	return s
}

// ------------------------------------------------------------- Node

// NodeWrapper builds a Node.
type NodeWrapper struct{ *corev1.Node }

// MakeNode is a node "n1" with no conditions.
func MakeNode() *NodeWrapper {
	md := meta("n1")
	md.Namespace = ""
	return &NodeWrapper{&corev1.Node{ApiVersion: "v1", Kind: "Node", Metadata: md,
		Spec: &corev1.NodeSpec{}, Status: &corev1.NodeStatus{}}}
}

func (n *NodeWrapper) Obj() *corev1.Node { return n.Node }
func (n *NodeWrapper) Name(name string) *NodeWrapper {
	n.Metadata.Name, n.Metadata.Uid = name, name+"-uid"
	return n
}

// Condition sets a condition with its heartbeat and transition at t.
func (n *NodeWrapper) Condition(t, status string, at time.Time) *NodeWrapper {
	n.Status.Conditions = append(n.Status.Conditions, &corev1.NodeCondition{Type: t, Status: status,
		LastHeartbeatTime: &metav1.Time{Seconds: at.Unix()}, LastTransitionTime: &metav1.Time{Seconds: at.Unix()}})
	return n
}
func (n *NodeWrapper) Taint(key, effect string, added time.Time) *NodeWrapper {
	n.Spec.Taints = append(n.Spec.Taints, &corev1.Taint{Key: key, Effect: effect, TimeAdded: &metav1.Time{Seconds: added.Unix()}})
	return n
}

// Lease is the node lease kube-node-lease/<node> renewed at t.
func Lease(node string, renewed time.Time) *coordinationv1.Lease {
	md := meta(node)
	md.Namespace = "kube-node-lease"
	return &coordinationv1.Lease{ApiVersion: "coordination.k8s.io/v1", Kind: "Lease", Metadata: md,
		Spec: &coordinationv1.LeaseSpec{HolderIdentity: proto.String(node), LeaseDurationSeconds: proto.Int32(40),
			RenewTime: &metav1.MicroTime{Seconds: renewed.Unix(), Nanos: int32(renewed.Nanosecond())}}}
}

// Namespace is an active namespace.
func Namespace(name string) *corev1.Namespace {
	md := meta(name)
	md.Namespace = ""
	return &corev1.Namespace{ApiVersion: "v1", Kind: "Namespace", Metadata: md,
		Spec: &corev1.NamespaceSpec{}, Status: &corev1.NamespaceStatus{Phase: "Active"}}
}
