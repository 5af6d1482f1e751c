package admission

import (
	"fmt"
	"sort"
	"strings"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/resource"
)

// Result is an admission decision.
type Result struct {
	Admit   bool
	Reason  string
	Message string
}

// Admitted is the result of a pod that may run.
var Admitted = Result{Admit: true}

// Admit decides whether pod may run beside active on a node with
// allocatable resources.
func Admit(pod *corev1.Pod, allocatable resource.List, active []*corev1.Pod) Result {
	used := resource.List{}
	for _, p := range active {
		used.Add(resource.PodRequests(p))
	}
	req := resource.PodRequests(pod)
	if max := allocatable[resource.Pods]; max > 0 && int64(len(active))+1 > max {
		return reject(resource.Pods, 1, int64(len(active)), max)
	}
	names := make([]string, 0, len(req))
	for name := range req {
		names = append(names, name)
	}
	sort.Strings(names)
	for _, name := range names {
		want := req[name]
		if want == 0 {
			continue
		}
		capacity, known := allocatable[name]
		if !known {
			if name == resource.CPU || name == resource.Memory || name == resource.EphemeralStorage {
				continue // the node did not say: do not guess
			}
			capacity = 0 // an extended resource the node does not have
		}
		if used[name]+want > capacity {
			return reject(name, want, used[name], capacity)
		}
	}
	if conflict := hostPortConflict(pod, active); conflict != "" {
		return Result{
			Reason:  "NodePorts",
			Message: "Pod was rejected: Predicate NodePorts failed: node(s) didn't have free ports for the requested pod ports",
		}
	}
	return Admitted
}

func reject(name string, want, used, capacity int64) Result {
	return Result{
		Reason: "OutOf" + name,
		Message: fmt.Sprintf("Pod was rejected: Node didn't have enough resource: %s, requested: %d, used: %d, capacity: %d",
			name, want, used, capacity),
	}
}

type hostPort struct {
	ip, protocol string
	port         int32
}

func hostPorts(pod *corev1.Pod) []hostPort {
	var out []hostPort
	for _, c := range pod.GetSpec().GetContainers() {
		for _, p := range c.GetPorts() {
			if p.GetHostPort() <= 0 {
				continue
			}
			proto := strings.ToUpper(p.GetProtocol())
			if proto == "" {
				proto = "TCP"
			}
			ip := p.GetHostIp()
			if ip == "" {
				ip = "0.0.0.0"
			}
			out = append(out, hostPort{ip, proto, p.GetHostPort()})
		}
	}
	return out
}

// hostPortConflict names a hostPort pod wants that an active pod holds.
func hostPortConflict(pod *corev1.Pod, active []*corev1.Pod) string {
	want := hostPorts(pod)
	if len(want) == 0 {
		return ""
	}
	for _, p := range active {
		for _, held := range hostPorts(p) {
			for _, w := range want {
				if w.port == held.port && w.protocol == held.protocol && (w.ip == held.ip || w.ip == "0.0.0.0" || held.ip == "0.0.0.0") {
					return fmt.Sprintf("%s/%d", w.protocol, w.port)
				}
			}
		}
	}
	return ""
}
