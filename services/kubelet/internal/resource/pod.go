package resource

import (
	corev1 "podline.dev/proto/core/v1"
)

// PodRequests is what a pod asks the node for, as the scheduler and the
// kubelet's admission count it: the sum of its app containers' requests,
// raised to the largest init container's request where that is larger,
// plus the pod overhead. A container with a limit and no request requests
// its limit. Unparseable quantities count as zero.
func PodRequests(pod *corev1.Pod) List {
	sum := List{}
	for _, c := range pod.GetSpec().GetContainers() {
		sum.Add(ContainerRequests(c))
	}
	for _, c := range pod.GetSpec().GetInitContainers() {
		sum.Max(ContainerRequests(c))
	}
	if oh, err := ParseList(pod.GetSpec().GetOverhead()); err == nil {
		sum.Add(oh)
	}
	return sum
}

// ContainerRequests is one container's requests, defaulted from its limits.
func ContainerRequests(c *corev1.Container) List {
	out := List{}
	for name, s := range c.GetResources().GetLimits() {
		if v, err := Amount(name, s); err == nil {
			out[name] = v
		}
	}
	for name, s := range c.GetResources().GetRequests() {
		if v, err := Amount(name, s); err == nil {
			out[name] = v
		}
	}
	return out
}

// ContainerLimits is one container's limits.
func ContainerLimits(c *corev1.Container) List {
	out := List{}
	for name, s := range c.GetResources().GetLimits() {
		if v, err := Amount(name, s); err == nil {
			out[name] = v
		}
	}
	return out
}
