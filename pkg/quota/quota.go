package quota

import (
	"fmt"
	"maps"
	"slices"
	"strings"
	"time"

	"podline.dev/pkg/resource"
	corev1 "podline.dev/proto/core/v1"
)

// Resource names of the pod evaluator, as Kubernetes names them ("cpu" and
// "memory" are requests.cpu and requests.memory; "count/pods" is "pods").
const (
	Pods           = "pods"
	CountPods      = "count/pods"
	CPU            = "cpu"
	Memory         = "memory"
	RequestsCPU    = "requests.cpu"
	RequestsMemory = "requests.memory"
	LimitsCPU      = "limits.cpu"
	LimitsMemory   = "limits.memory"
)

// CountPrefix starts an object-count name: count/<resource>[.<group>].
const CountPrefix = "count/"

// podNames are the names a pod is measured under.
var podNames = []string{Pods, CountPods, CPU, Memory, RequestsCPU, RequestsMemory, LimitsCPU, LimitsMemory}

// legacyCounts are the core resources Kubernetes also counts under their
// bare name ("services": 10), beside count/<resource>.
var legacyCounts = []string{"configmaps", "secrets", "services", "resourcequotas", "persistentvolumeclaims", "replicationcontrollers"}

// Usage is an amount per quota resource name, in milli-units.
type Usage map[string]int64

// IsPodResource reports whether name is measured from pods.
func IsPodResource(name string) bool { return slices.Contains(podNames, name) }

// PodResources are those of names that pods are measured under, sorted.
func PodResources(names []string) []string {
	var out []string
	for _, n := range names {
		if IsPodResource(n) {
			out = append(out, n)
		}
	}
	slices.Sort(out)
	return out
}

// CountedResource returns the group and resource an object-count name
// counts: count/configmaps and configmaps are core configmaps,
// count/deployments.apps is apps deployments. Pods are not counted here
// (they are measured by PodUsage).
func CountedResource(name string) (group, res string, ok bool) {
	if slices.Contains(legacyCounts, name) {
		return "", name, true
	}
	rest, found := strings.CutPrefix(name, CountPrefix)
	if !found || rest == "" || rest == Pods {
		return "", "", false
	}
	res, group, _ = strings.Cut(rest, ".")
	return group, res, true
}

// CountNames are the names under which one object of group/res is counted.
func CountNames(group, res string) []string {
	if group == "" {
		names := []string{CountPrefix + res}
		if slices.Contains(legacyCounts, res) {
			names = append(names, res)
		}
		return names
	}
	return []string{CountPrefix + res + "." + group}
}

// CountUsage is the usage of n objects of group/res.
func CountUsage(group, res string, n int) Usage {
	u := Usage{}
	for _, name := range CountNames(group, res) {
		u[name] = int64(n) * 1000
	}
	return u
}

// PodUsage is what one pod counts for: itself, and per compute resource
// the larger of its containers' sum and its largest init container, as
// Kubernetes computes a pod's effective request.
func PodUsage(p *corev1.Pod) Usage {
	u := Usage{Pods: 1000, CountPods: 1000}
	for _, key := range []struct{ name, kind, res string }{
		{RequestsCPU, "requests", "cpu"}, {RequestsMemory, "requests", "memory"},
		{LimitsCPU, "limits", "cpu"}, {LimitsMemory, "limits", "memory"},
	} {
		u[key.name] = effective(p.GetSpec(), key.kind, key.res)
	}
	u[CPU], u[Memory] = u[RequestsCPU], u[RequestsMemory]
	return u
}

// PodCounts reports whether p counts against quota at now: a pod that
// finished does not, nor one whose deletion is overdue by more than its
// grace period (a lost node's pods must not block their replacements).
func PodCounts(p *corev1.Pod, now time.Time) bool {
	if ph := p.GetStatus().GetPhase(); ph == "Succeeded" || ph == "Failed" {
		return false
	}
	md := p.GetMetadata()
	if md.GetDeletionTimestamp() != nil && md.DeletionGracePeriodSeconds != nil {
		gone := time.Unix(md.GetDeletionTimestamp().GetSeconds(), 0).Add(time.Duration(md.GetDeletionGracePeriodSeconds()) * time.Second)
		if now.After(gone) {
			return false
		}
	}
	return true
}

// PodsUsage sums the usage of the pods that count at now.
func PodsUsage(pods []*corev1.Pod, now time.Time) Usage {
	total := Usage{}
	for _, n := range podNames {
		total[n] = 0
	}
	for _, p := range pods {
		if PodCounts(p, now) {
			total.Add(PodUsage(p))
		}
	}
	return total
}

func effective(s *corev1.PodSpec, kind, res string) int64 {
	get := func(c *corev1.Container) int64 {
		v, err := resource.ParseMilli(amounts(c, kind)[res])
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

func amounts(c *corev1.Container, kind string) map[string]string {
	if kind == "limits" {
		return c.GetResources().GetLimits()
	}
	return c.GetResources().GetRequests()
}

// Missing lists the containers of p that do not set the compute resource
// name: a quota on a compute resource requires every container to set it.
// It is nil for names that are not compute resources.
func Missing(p *corev1.Pod, name string) []string {
	var kind, res string
	switch name {
	case CPU, RequestsCPU:
		kind, res = "requests", "cpu"
	case Memory, RequestsMemory:
		kind, res = "requests", "memory"
	case LimitsCPU:
		kind, res = "limits", "cpu"
	case LimitsMemory:
		kind, res = "limits", "memory"
	default:
		return nil
	}
	var out []string
	for _, cs := range [][]*corev1.Container{p.GetSpec().GetInitContainers(), p.GetSpec().GetContainers()} {
		for _, c := range cs {
			if _, ok := amounts(c, kind)[res]; !ok {
				out = append(out, c.GetName())
			}
		}
	}
	return out
}

// Add adds o to u.
func (u Usage) Add(o Usage) {
	for k, v := range o {
		u[k] += v
	}
}

// Mask keeps the names given, dropping the others.
func (u Usage) Mask(names []string) Usage {
	out := Usage{}
	for _, n := range names {
		if v, ok := u[n]; ok {
			out[n] = v
		}
	}
	return out
}

// Names are u's names, sorted.
func (u Usage) Names() []string { return slices.Sorted(maps.Keys(u)) }

// Strings renders u as a ResourceList (status.used, status.hard).
func (u Usage) Strings() map[string]string {
	out := make(map[string]string, len(u))
	for k, v := range u {
		out[k] = Format(k, v)
	}
	return out
}

// Parse reads a ResourceList into milli-units; a quantity that does not
// parse is left out.
func Parse(list map[string]string) Usage {
	out := Usage{}
	for k, v := range list {
		if m, err := resource.ParseMilli(v); err == nil {
			out[k] = m
		}
	}
	return out
}

// Equal reports whether two ResourceLists hold the same amounts.
func Equal(a, b map[string]string) bool {
	pa, pb := Parse(a), Parse(b)
	return len(a) == len(b) && len(pa) == len(a) && maps.Equal(pa, pb)
}

// Format prints milli-units the way Kubernetes prints such quantities:
// CPU in cores or millicores, memory in the largest binary unit that
// divides it, counts as integers.
func Format(name string, milli int64) string {
	switch name {
	case CPU, RequestsCPU, LimitsCPU:
		if milli%1000 == 0 {
			return fmt.Sprint(milli / 1000)
		}
		return fmt.Sprintf("%dm", milli)
	case Memory, RequestsMemory, LimitsMemory:
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
