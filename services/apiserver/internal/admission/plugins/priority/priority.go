// Package priority is Kubernetes' Priority admission: a new pod's
// spec.priority and spec.preemptionPolicy come from the PriorityClass it
// names (spec.priorityClassName), or from the cluster's globalDefault
// class, or are 0 and PreemptLowerPriority when there is none. The two
// system classes exist without an object, as Kubernetes creates them at
// start. A pod may not name a missing class, nor set a priority that
// differs from its class's.
package priority

import (
	"context"
	"fmt"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	corev1 "podline.dev/proto/core/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "Priority"

// Kubernetes' system classes and defaults.
const (
	SystemNodeCritical    = "system-node-critical"
	SystemClusterCritical = "system-cluster-critical"
	DefaultPreemption     = "PreemptLowerPriority"
)

// SystemClasses are the classes that exist without an object.
var SystemClasses = map[string]int32{SystemNodeCritical: 2000001000, SystemClusterCritical: 2000000000}

// Plugin mutates pod creates.
type Plugin struct {
	classes interface {
		admission.Getter
		admission.Lister
	}
}

var _ admission.Mutator = (*Plugin)(nil)

// New returns the plugin reading PriorityClasses from classes.
func New(classes interface {
	admission.Getter
	admission.Lister
}) *Plugin {
	return &Plugin{classes: classes}
}

// Name implements admission.Mutator.
func (*Plugin) Name() string { return Name }

// Admit implements admission.Mutator.
func (p *Plugin) Admit(ctx context.Context, a *admission.Attributes) (bool, error) {
	if a.Operation != admission.Create || !a.Is("", "Pod") {
		return false, nil
	}
	pod := a.Object.(*corev1.Pod)
	if pod.Spec == nil {
		pod.Spec = &corev1.PodSpec{}
	}
	s := pod.Spec
	value, policy, name, err := p.resolve(ctx, s.PriorityClassName)
	if err != nil {
		if apierrors.IsNotFound(err) {
			return false, a.Forbidden(fmt.Sprintf("no PriorityClass with name %s was found", s.PriorityClassName))
		}
		return false, err
	}
	if s.Priority != nil && *s.Priority != value {
		return false, a.Forbidden(fmt.Sprintf("the integer value of priority (%d) must not be provided in pod spec; priority admission controller computed %d from the given PriorityClass name", *s.Priority, value))
	}
	if s.PreemptionPolicy != nil && policy != "" && *s.PreemptionPolicy != policy {
		return false, a.Forbidden(fmt.Sprintf("the string value of PreemptionPolicy (%s) must not be provided in pod spec; priority admission controller computed %s from the given PriorityClass name", *s.PreemptionPolicy, policy))
	}
	// A priority that is set is the class's (checked above), so the pod
	// changes when it gains a class name, a priority or a policy.
	mutated := s.PriorityClassName != name || s.Priority == nil || s.PreemptionPolicy == nil
	s.PriorityClassName = name
	s.Priority = proto.Int32(value)
	if s.PreemptionPolicy == nil {
		if policy == "" {
			policy = DefaultPreemption
		}
		s.PreemptionPolicy = proto.String(policy)
	}
	return mutated, nil
}

// resolve finds a class's value and preemption policy; "" means the
// global default class, if any.
func (p *Plugin) resolve(ctx context.Context, name string) (int32, string, string, error) {
	if v, ok := SystemClasses[name]; ok {
		return v, DefaultPreemption, name, nil
	}
	if name != "" {
		obj, err := p.classes.Get(ctx, "", name)
		if err != nil {
			return 0, "", "", err
		}
		pc := obj.(*schedulingv1.PriorityClass)
		return pc.GetValue(), pc.GetPreemptionPolicy(), name, nil
	}
	all, err := p.classes.List(ctx, "")
	if err != nil {
		return 0, "", "", err
	}
	for _, o := range all {
		if pc := o.(*schedulingv1.PriorityClass); pc.GetGlobalDefault() {
			return pc.GetValue(), pc.GetPreemptionPolicy(), pc.GetMetadata().GetName(), nil
		}
	}
	return 0, "", "", nil
}
