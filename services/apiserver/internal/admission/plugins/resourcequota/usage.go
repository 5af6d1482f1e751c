package resourcequota

import (
	"fmt"

	"podline.dev/pkg/resource"
	corev1 "podline.dev/proto/core/v1"
)

// Tracked resources: the pod count and compute requests and limits, with
// Kubernetes' names ("cpu" and "memory" are aliases of requests.*).
const (
	Pods           = "pods"
	RequestsCPU    = "requests.cpu"
	RequestsMemory = "requests.memory"
	LimitsCPU      = "limits.cpu"
	LimitsMemory   = "limits.memory"
)

// canonical maps a quota's resource name to the tracked one.
func canonical(name string) string {
	switch name {
	case "cpu":
		return RequestsCPU
	case "memory":
		return RequestsMemory
	case "count/pods":
		return Pods
	}
	return name
}

// Usage is what pods use, in milli-units per tracked resource.
type Usage map[string]int64

// podUsage is what one pod counts for: itself, and per compute resource
// the larger of its containers' sum and its largest init container, as
// Kubernetes computes a pod's effective request.
func podUsage(p *corev1.Pod) Usage {
	u := Usage{Pods: 1000}
	for _, key := range []struct{ name, kind, res string }{
		{RequestsCPU, "requests", "cpu"}, {RequestsMemory, "requests", "memory"},
		{LimitsCPU, "limits", "cpu"}, {LimitsMemory, "limits", "memory"},
	} {
		u[key.name] = effective(p.GetSpec(), key.kind, key.res)
	}
	return u
}

func effective(s *corev1.PodSpec, kind, res string) int64 {
	get := func(c *corev1.Container) int64 {
		m := c.GetResources().GetRequests()
		if kind == "limits" {
			m = c.GetResources().GetLimits()
		}
		v, err := resource.ParseMilli(m[res])
		if err != nil {
			return 0
		}
		return v
	}
	var sum, initMax int64
	for _, c := range s.GetContainers() {
		sum += get(c)
	}
	for _, c := range s.GetInitContainers() {
		initMax = max(initMax, get(c))
	}
	return max(sum, initMax)
}

// missing lists, per tracked compute resource, the containers that do not
// set it: a quota on a resource requires every container to set it.
func missing(p *corev1.Pod, name string) []string {
	kind, res := "requests", "cpu"
	switch name {
	case RequestsMemory:
		res = "memory"
	case LimitsCPU:
		kind = "limits"
	case LimitsMemory:
		kind, res = "limits", "memory"
	case RequestsCPU:
	default:
		return nil
	}
	var out []string
	for _, c := range append(append([]*corev1.Container(nil), p.GetSpec().GetInitContainers()...), p.GetSpec().GetContainers()...) {
		m := c.GetResources().GetRequests()
		if kind == "limits" {
			m = c.GetResources().GetLimits()
		}
		if _, ok := m[res]; !ok {
			out = append(out, c.GetName())
		}
	}
	return out
}

// format prints milli-units the way Kubernetes prints such quantities.
func format(name string, milli int64) string {
	switch name {
	case RequestsCPU, LimitsCPU:
		if milli%1000 == 0 {
			return fmt.Sprint(milli / 1000)
		}
		return fmt.Sprintf("%dm", milli)
	case RequestsMemory, LimitsMemory:
		b := milli / 1000
		for _, u := range []struct {
			suffix string
			size   int64
		}{{"Gi", 1 << 30}, {"Mi", 1 << 20}, {"Ki", 1 << 10}} {
			if b != 0 && b%u.size == 0 {
				return fmt.Sprintf("%d%s", b/u.size, u.suffix)
			}
		}
		return fmt.Sprint(b)
	}
	return fmt.Sprint(milli / 1000)
}
