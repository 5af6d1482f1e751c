package framework

import (
	"podline.dev/pkg/resource"
	corev1 "podline.dev/proto/core/v1"
)

// Resource names, as in core/v1.
const (
	ResourceCPU              = "cpu"
	ResourceMemory           = "memory"
	ResourceEphemeralStorage = "ephemeral-storage"
	ResourcePods             = "pods"
)

// The requests the scheduler assumes for scoring when a container sets
// none, as Kubernetes' schedutil.DefaultMilliCPURequest/DefaultMemoryRequest.
const (
	DefaultMilliCPURequest int64 = 100
	DefaultMemoryRequest   int64 = 200 * 1024 * 1024
)

// Resource is an amount of each resource: cpu in millicores, the rest in
// units (bytes, pods, devices).
type Resource struct {
	MilliCPU         int64
	Memory           int64
	EphemeralStorage int64
	AllowedPodNumber int64
	// ScalarResources are extended resources and hugepages, by name.
	ScalarResources map[string]int64
}

// NewResource parses a resource list ("cpu": "100m", "memory": "64Mi").
// Quantities that do not parse count as 0 and are reported in err.
func NewResource(list map[string]string) (Resource, error) {
	var r Resource
	var firstErr error
	for name, s := range list {
		q, err := resource.Parse(s)
		if err != nil {
			if firstErr == nil {
				firstErr = err
			}
			continue
		}
		r.set(name, q)
	}
	return r, firstErr
}

func (r *Resource) set(name string, q resource.Quantity) {
	switch name {
	case ResourceCPU:
		r.MilliCPU = q.MilliValue()
	case ResourceMemory:
		r.Memory = q.Value()
	case ResourceEphemeralStorage:
		r.EphemeralStorage = q.Value()
	case ResourcePods:
		r.AllowedPodNumber = q.Value()
	default:
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[name] = q.Value()
	}
}

// Get returns the amount of one resource by name.
func (r *Resource) Get(name string) int64 {
	switch name {
	case ResourceCPU:
		return r.MilliCPU
	case ResourceMemory:
		return r.Memory
	case ResourceEphemeralStorage:
		return r.EphemeralStorage
	case ResourcePods:
		return r.AllowedPodNumber
	}
	return r.ScalarResources[name]
}

// Add adds o to r.
func (r *Resource) Add(o Resource) {
	r.MilliCPU += o.MilliCPU
	r.Memory += o.Memory
	r.EphemeralStorage += o.EphemeralStorage
	r.AllowedPodNumber += o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[k] += v
	}
}

// Sub subtracts o from r.
func (r *Resource) Sub(o Resource) {
	r.MilliCPU -= o.MilliCPU
	r.Memory -= o.Memory
	r.EphemeralStorage -= o.EphemeralStorage
	r.AllowedPodNumber -= o.AllowedPodNumber
	for k, v := range o.ScalarResources {
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[k] -= v
	}
}

// SetMax raises each of r's amounts to o's where o's is larger.
func (r *Resource) SetMax(o Resource) {
	r.MilliCPU = max(r.MilliCPU, o.MilliCPU)
	r.Memory = max(r.Memory, o.Memory)
	r.EphemeralStorage = max(r.EphemeralStorage, o.EphemeralStorage)
	r.AllowedPodNumber = max(r.AllowedPodNumber, o.AllowedPodNumber)
	for k, v := range o.ScalarResources {
		if r.ScalarResources == nil {
			r.ScalarResources = map[string]int64{}
		}
		r.ScalarResources[k] = max(r.ScalarResources[k], v)
	}
}

// Clone deep-copies r.
func (r Resource) Clone() Resource {
	if r.ScalarResources != nil {
		m := make(map[string]int64, len(r.ScalarResources))
		for k, v := range r.ScalarResources {
			m[k] = v
		}
		r.ScalarResources = m
	}
	return r
}

// PodRequests computes what a pod asks for, as Kubernetes'
// resourcehelper.PodRequests: the sum of its containers and its sidecars
// (init containers with restartPolicy Always), or the largest init
// container plus the sidecars started before it, whichever is more, plus
// the pod overhead. With nonZero, a container that does not request cpu or
// memory counts as DefaultMilliCPURequest/DefaultMemoryRequest (scoring).
func PodRequests(pod *corev1.Pod, nonZero bool) (Resource, error) {
	var reqs, restartableInit, initMax Resource
	var firstErr error
	container := func(c *corev1.Container) Resource {
		r, err := NewResource(c.GetResources().GetRequests())
		if err != nil && firstErr == nil {
			firstErr = err
		}
		if nonZero {
			if _, ok := c.GetResources().GetRequests()[ResourceCPU]; !ok {
				r.MilliCPU = DefaultMilliCPURequest
			}
			if _, ok := c.GetResources().GetRequests()[ResourceMemory]; !ok {
				r.Memory = DefaultMemoryRequest
			}
		}
		return r
	}
	for _, c := range pod.GetSpec().GetContainers() {
		reqs.Add(container(c))
	}
	for _, c := range pod.GetSpec().GetInitContainers() {
		r := container(c)
		if c.GetRestartPolicy() == "Always" {
			reqs.Add(r)
			restartableInit.Add(r)
			r = restartableInit.Clone()
		} else {
			r.Add(restartableInit)
		}
		initMax.SetMax(r)
	}
	reqs.SetMax(initMax)
	if oh := pod.GetSpec().GetOverhead(); len(oh) > 0 {
		o, err := NewResource(oh)
		if err != nil && firstErr == nil {
			firstErr = err
		}
		reqs.Add(o)
	}
	return reqs, firstErr
}
