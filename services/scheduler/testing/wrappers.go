package testing

import (
	"fmt"
	"strconv"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// PodWrapper builds a Pod.
type PodWrapper struct{ pod *corev1.Pod }

// MakePod starts a Pod in namespace default with no containers.
func MakePod() *PodWrapper {
	return &PodWrapper{pod: &corev1.Pod{
		ApiVersion: "v1", Kind: "Pod",
		Metadata: &metav1.ObjectMeta{Namespace: "default"},
		Spec:     &corev1.PodSpec{},
		Status:   &corev1.PodStatus{Phase: "Pending"},
	}}
}

// Obj returns the Pod.
func (p *PodWrapper) Obj() *corev1.Pod { return p.pod }

// Name sets the name (and a UID derived from it, unless one is set).
func (p *PodWrapper) Name(n string) *PodWrapper {
	p.pod.Metadata.Name = n
	if p.pod.Metadata.Uid == "" {
		p.pod.Metadata.Uid = "uid-" + n
	}
	return p
}

// Namespace sets the namespace.
func (p *PodWrapper) Namespace(ns string) *PodWrapper { p.pod.Metadata.Namespace = ns; return p }

// UID sets the UID.
func (p *PodWrapper) UID(uid string) *PodWrapper { p.pod.Metadata.Uid = uid; return p }

// Label adds a label.
func (p *PodWrapper) Label(k, v string) *PodWrapper {
	if p.pod.Metadata.Labels == nil {
		p.pod.Metadata.Labels = map[string]string{}
	}
	p.pod.Metadata.Labels[k] = v
	return p
}

// Labels adds labels.
func (p *PodWrapper) Labels(m map[string]string) *PodWrapper {
	for k, v := range m {
		p.Label(k, v)
	}
	return p
}

// Created sets the creation timestamp (Unix seconds).
func (p *PodWrapper) Created(sec int64) *PodWrapper {
	p.pod.Metadata.CreationTimestamp = &metav1.Time{Seconds: sec}
	return p
}

// Node sets spec.nodeName (a bound pod).
func (p *PodWrapper) Node(n string) *PodWrapper { p.pod.Spec.NodeName = n; return p }

// SchedulerName sets spec.schedulerName.
func (p *PodWrapper) SchedulerName(n string) *PodWrapper { p.pod.Spec.SchedulerName = n; return p }

// Priority sets spec.priority.
func (p *PodWrapper) Priority(v int32) *PodWrapper { p.pod.Spec.Priority = &v; return p }

// PreemptionPolicy sets spec.preemptionPolicy ("Never", "PreemptLowerPriority").
func (p *PodWrapper) PreemptionPolicy(v string) *PodWrapper {
	p.pod.Spec.PreemptionPolicy = &v
	return p
}

// Terminating marks the pod as being deleted.
func (p *PodWrapper) Terminating() *PodWrapper {
	p.pod.Metadata.DeletionTimestamp = &metav1.Time{Seconds: 1}
	return p
}

// NominatedNodeName sets status.nominatedNodeName.
func (p *PodWrapper) NominatedNodeName(n string) *PodWrapper {
	p.pod.Status.NominatedNodeName = n
	return p
}

// Phase sets status.phase.
func (p *PodWrapper) Phase(ph string) *PodWrapper { p.pod.Status.Phase = ph; return p }

// StartTime sets status.startTime (Unix seconds).
func (p *PodWrapper) StartTime(sec int64) *PodWrapper {
	p.pod.Status.StartTime = &metav1.Time{Seconds: sec}
	return p
}

func (p *PodWrapper) container(image string, requests map[string]string) *PodWrapper {
	c := &corev1.Container{Name: fmt.Sprintf("c%d", len(p.pod.Spec.Containers)), Image: image}
	if len(requests) > 0 {
		c.Resources = &corev1.ResourceRequirements{Requests: requests}
	}
	p.pod.Spec.Containers = append(p.pod.Spec.Containers, c)
	return p
}

// Req adds a container requesting cpu and memory ("" leaves one out).
func (p *PodWrapper) Req(cpu, mem string) *PodWrapper {
	r := map[string]string{}
	if cpu != "" {
		r["cpu"] = cpu
	}
	if mem != "" {
		r["memory"] = mem
	}
	return p.container("registry.podline:5000/pause:3.10", r)
}

// Res adds a container with arbitrary requests.
func (p *PodWrapper) Res(requests map[string]string) *PodWrapper {
	return p.container("registry.podline:5000/pause:3.10", requests)
}

// InitReq adds an init container requesting cpu and memory; sidecar makes it restartPolicy Always.
func (p *PodWrapper) InitReq(cpu, mem string, sidecar bool) *PodWrapper {
	r := map[string]string{}
	if cpu != "" {
		r["cpu"] = cpu
	}
	if mem != "" {
		r["memory"] = mem
	}
	c := &corev1.Container{Name: fmt.Sprintf("init%d", len(p.pod.Spec.InitContainers)), Image: "busybox",
		Resources: &corev1.ResourceRequirements{Requests: r}}
	if sidecar {
		always := "Always"
		c.RestartPolicy = &always
	}
	p.pod.Spec.InitContainers = append(p.pod.Spec.InitContainers, c)
	return p
}

// Container adds a container running image with no requests.
func (p *PodWrapper) Container(image string) *PodWrapper { return p.container(image, nil) }

// HostPort adds a container exposing a host port (protocol "" is TCP, ip "" is all).
func (p *PodWrapper) HostPort(port int32, protocol, ip string) *PodWrapper {
	p.container("registry.podline:5000/web:1.0", nil)
	c := p.pod.Spec.Containers[len(p.pod.Spec.Containers)-1]
	c.Ports = append(c.Ports, &corev1.ContainerPort{ContainerPort: 8080, HostPort: port, Protocol: protocol, HostIp: ip})
	return p
}

// NodeSelector sets spec.nodeSelector.
func (p *PodWrapper) NodeSelector(m map[string]string) *PodWrapper {
	p.pod.Spec.NodeSelector = m
	return p
}

func (p *PodWrapper) affinity() *corev1.Affinity {
	if p.pod.Spec.Affinity == nil {
		p.pod.Spec.Affinity = &corev1.Affinity{}
	}
	return p.pod.Spec.Affinity
}

func (p *PodWrapper) nodeAffinity() *corev1.NodeAffinity {
	a := p.affinity()
	if a.NodeAffinity == nil {
		a.NodeAffinity = &corev1.NodeAffinity{}
	}
	return a.NodeAffinity
}

// NodeAffinityIn adds a required term "key In values" (terms are ORed).
func (p *PodWrapper) NodeAffinityIn(key string, values ...string) *PodWrapper {
	return p.NodeAffinityTerm(&corev1.NodeSelectorRequirement{Key: key, Operator: "In", Values: values})
}

// NodeAffinityTerm adds a required term made of reqs.
func (p *PodWrapper) NodeAffinityTerm(reqs ...*corev1.NodeSelectorRequirement) *PodWrapper {
	na := p.nodeAffinity()
	if na.RequiredDuringSchedulingIgnoredDuringExecution == nil {
		na.RequiredDuringSchedulingIgnoredDuringExecution = &corev1.NodeSelector{}
	}
	ns := na.RequiredDuringSchedulingIgnoredDuringExecution
	ns.NodeSelectorTerms = append(ns.NodeSelectorTerms, &corev1.NodeSelectorTerm{MatchExpressions: reqs})
	return p
}

// PreferredNodeAffinityIn adds a preferred term "key In values" with weight.
func (p *PodWrapper) PreferredNodeAffinityIn(weight int32, key string, values ...string) *PodWrapper {
	na := p.nodeAffinity()
	na.PreferredDuringSchedulingIgnoredDuringExecution = append(na.PreferredDuringSchedulingIgnoredDuringExecution,
		&corev1.PreferredSchedulingTerm{Weight: weight, Preference: &corev1.NodeSelectorTerm{
			MatchExpressions: []*corev1.NodeSelectorRequirement{{Key: key, Operator: "In", Values: values}}}})
	return p
}

// Toleration adds a toleration (operator "" is Equal).
func (p *PodWrapper) Toleration(key, operator, value, effect string) *PodWrapper {
	p.pod.Spec.Tolerations = append(p.pod.Spec.Tolerations, &corev1.Toleration{Key: key, Operator: operator, Value: value, Effect: effect})
	return p
}

// SpreadConstraint adds a topology spread constraint selecting pods with matchLabels.
func (p *PodWrapper) SpreadConstraint(maxSkew int32, topologyKey, whenUnsatisfiable string, matchLabels map[string]string) *PodWrapper {
	p.pod.Spec.TopologySpreadConstraints = append(p.pod.Spec.TopologySpreadConstraints, &corev1.TopologySpreadConstraint{
		MaxSkew: maxSkew, TopologyKey: topologyKey, WhenUnsatisfiable: whenUnsatisfiable,
		LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels},
	})
	return p
}

// MinDomains sets minDomains on the last spread constraint.
func (p *PodWrapper) MinDomains(n int32) *PodWrapper {
	c := p.pod.Spec.TopologySpreadConstraints[len(p.pod.Spec.TopologySpreadConstraints)-1]
	c.MinDomains = &n
	return p
}

func term(topologyKey string, matchLabels map[string]string) *corev1.PodAffinityTerm {
	return &corev1.PodAffinityTerm{TopologyKey: topologyKey, LabelSelector: &metav1.LabelSelector{MatchLabels: matchLabels}}
}

// PodAffinity adds a required pod affinity term.
func (p *PodWrapper) PodAffinity(topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(topologyKey, matchLabels))
	return p
}

// PodAntiAffinity adds a required pod anti-affinity term.
func (p *PodWrapper) PodAntiAffinity(topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.RequiredDuringSchedulingIgnoredDuringExecution, term(topologyKey, matchLabels))
	return p
}

// PreferredPodAffinity adds a preferred pod affinity term.
func (p *PodWrapper) PreferredPodAffinity(weight int32, topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAffinity == nil {
		a.PodAffinity = &corev1.PodAffinity{}
	}
	a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		&corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term(topologyKey, matchLabels)})
	return p
}

// PreferredPodAntiAffinity adds a preferred pod anti-affinity term.
func (p *PodWrapper) PreferredPodAntiAffinity(weight int32, topologyKey string, matchLabels map[string]string) *PodWrapper {
	a := p.affinity()
	if a.PodAntiAffinity == nil {
		a.PodAntiAffinity = &corev1.PodAntiAffinity{}
	}
	a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution = append(a.PodAntiAffinity.PreferredDuringSchedulingIgnoredDuringExecution,
		&corev1.WeightedPodAffinityTerm{Weight: weight, PodAffinityTerm: term(topologyKey, matchLabels)})
	return p
}

// SchedulingGate adds a scheduling gate.
func (p *PodWrapper) SchedulingGate(name string) *PodWrapper {
	p.pod.Spec.SchedulingGates = append(p.pod.Spec.SchedulingGates, &corev1.PodSchedulingGate{Name: name})
	return p
}

// NodeWrapper builds a Node.
type NodeWrapper struct{ node *corev1.Node }

// MakeNode starts a Node with no capacity.
func MakeNode() *NodeWrapper {
	return &NodeWrapper{node: &corev1.Node{
		ApiVersion: "v1", Kind: "Node",
		Metadata: &metav1.ObjectMeta{},
		Spec:     &corev1.NodeSpec{},
		Status:   &corev1.NodeStatus{Allocatable: map[string]string{}, Capacity: map[string]string{}},
	}}
}

// Obj returns the Node.
func (n *NodeWrapper) Obj() *corev1.Node { return n.node }

// Name sets the name, its UID and the kubernetes.io/hostname label.
func (n *NodeWrapper) Name(name string) *NodeWrapper {
	n.node.Metadata.Name = name
	n.node.Metadata.Uid = "uid-" + name
	return n.Label("kubernetes.io/hostname", name)
}

// Label adds a label.
func (n *NodeWrapper) Label(k, v string) *NodeWrapper {
	if n.node.Metadata.Labels == nil {
		n.node.Metadata.Labels = map[string]string{}
	}
	n.node.Metadata.Labels[k] = v
	return n
}

// Zone sets topology.kubernetes.io/zone.
func (n *NodeWrapper) Zone(z string) *NodeWrapper { return n.Label("topology.kubernetes.io/zone", z) }

// Capacity sets cpu and memory capacity and allocatable, and room for 110 pods.
func (n *NodeWrapper) Capacity(cpu, mem string) *NodeWrapper {
	return n.Resources(map[string]string{"cpu": cpu, "memory": mem, "pods": "110"})
}

// Resources sets capacity and allocatable to r.
func (n *NodeWrapper) Resources(r map[string]string) *NodeWrapper {
	for k, v := range r {
		n.node.Status.Capacity[k] = v
		n.node.Status.Allocatable[k] = v
	}
	return n
}

// MaxPods sets the pods capacity.
func (n *NodeWrapper) MaxPods(v int) *NodeWrapper {
	return n.Resources(map[string]string{"pods": strconv.Itoa(v)})
}

// Taint adds a taint.
func (n *NodeWrapper) Taint(key, value, effect string) *NodeWrapper {
	n.node.Spec.Taints = append(n.node.Spec.Taints, &corev1.Taint{Key: key, Value: value, Effect: effect})
	return n
}

// Unschedulable sets spec.unschedulable.
func (n *NodeWrapper) Unschedulable(v bool) *NodeWrapper { n.node.Spec.Unschedulable = v; return n }

// Image adds an image the node has.
func (n *NodeWrapper) Image(size int64, names ...string) *NodeWrapper {
	n.node.Status.Images = append(n.node.Status.Images, &corev1.ContainerImage{Names: names, SizeBytes: size})
	return n
}
