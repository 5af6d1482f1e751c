// Package resourcequota is Kubernetes' ResourceQuota admission for pods:
// a pod created in a namespace with ResourceQuota objects is refused with
// 403 "exceeded quota" when it would take the namespace's pods, CPU or
// memory requests or limits over a quota's hard limits, and "failed
// quota" when a quota tracks a compute resource one of its containers
// does not set.
//
// Usage is computed at admission time from the namespace's non-terminal
// pods as the pods Lister returns them (the server reads them from etcd,
// so a pod created a moment ago counts), which costs a read of the
// namespace's pods per create in a namespace with quotas. Kubernetes
// instead keeps status.used in the quota and updates it in the same
// admission step, which also closes the window in which two concurrent
// creates both fit; podline has no quota controller to keep status.used
// yet, so that window exists here and status.used stays empty.
package resourcequota

import (
	"context"
	"fmt"
	"slices"
	"sort"
	"strings"

	"podline.dev/pkg/resource"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
)

// Name is the plugin's name in spans.
const Name = "ResourceQuota"

// Plugin validates pod creates against their namespace's quotas.
type Plugin struct {
	quotas, pods admission.Lister
}

var _ admission.Validator = (*Plugin)(nil)

// New returns the plugin reading quotas and pods from the listers.
func New(quotas, pods admission.Lister) *Plugin { return &Plugin{quotas: quotas, pods: pods} }

// Name implements admission.Validator.
func (*Plugin) Name() string { return Name }

// Validate implements admission.Validator.
func (p *Plugin) Validate(ctx context.Context, a *admission.Attributes) error {
	if a.Operation != admission.Create || !a.Is("", "Pod") {
		return nil
	}
	quotas, err := p.quotas.List(ctx, a.Namespace)
	if err != nil || len(quotas) == 0 {
		return err
	}
	pod := a.Object.(*corev1.Pod)
	var used Usage
	requested := podUsage(pod)
	for _, o := range quotas {
		q := o.(*corev1.ResourceQuota)
		hard := hardLimits(q)
		if len(hard) == 0 {
			continue
		}
		if msg := failedQuota(q, pod, hard); msg != "" {
			return a.Forbidden(msg)
		}
		if used == nil {
			if used, err = p.usage(ctx, a.Namespace, pod); err != nil {
				return err
			}
		}
		var over []string
		for _, name := range sortedNames(hard) {
			if requested[name] > 0 && used[name]+requested[name] > hard[name] {
				over = append(over, name)
			}
		}
		if len(over) > 0 {
			return a.Forbidden(fmt.Sprintf("exceeded quota: %s, requested: %s, used: %s, limited: %s",
				q.GetMetadata().GetName(), list(over, requested), list(over, used), list(over, hard)))
		}
	}
	return nil
}

// hardLimits are a quota's tracked limits in milli-units.
func hardLimits(q *corev1.ResourceQuota) Usage {
	out := Usage{}
	for k, v := range q.GetSpec().GetHard() {
		name := canonical(k)
		if !slices.Contains([]string{Pods, RequestsCPU, RequestsMemory, LimitsCPU, LimitsMemory}, name) {
			continue
		}
		m, err := resource.ParseMilli(v)
		if err != nil {
			continue
		}
		out[name] = m
	}
	return out
}

func failedQuota(q *corev1.ResourceQuota, pod *corev1.Pod, hard Usage) string {
	var parts []string
	for _, name := range sortedNames(hard) {
		if names := missing(pod, name); len(names) > 0 {
			parts = append(parts, fmt.Sprintf("%s for: %s", name, strings.Join(names, ",")))
		}
	}
	if len(parts) == 0 {
		return ""
	}
	return fmt.Sprintf("failed quota: %s: must specify %s", q.GetMetadata().GetName(), strings.Join(parts, "; "))
}

// usage sums what the namespace's live pods use, leaving out pod itself
// (a retried create) and pods that have finished.
func (p *Plugin) usage(ctx context.Context, namespace string, pod *corev1.Pod) (Usage, error) {
	objs, err := p.pods.List(ctx, namespace)
	if err != nil {
		return nil, err
	}
	total := Usage{}
	for _, o := range objs {
		other := o.(*corev1.Pod)
		if other.GetMetadata().GetName() == pod.GetMetadata().GetName() {
			continue
		}
		if ph := other.GetStatus().GetPhase(); ph == "Succeeded" || ph == "Failed" {
			continue
		}
		for k, v := range podUsage(other) {
			total[k] += v
		}
	}
	return total, nil
}

func sortedNames(u Usage) []string {
	out := make([]string, 0, len(u))
	for k := range u {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}

// list renders "pods=1,requests.cpu=500m" for the named resources.
func list(names []string, u Usage) string {
	parts := make([]string, len(names))
	for i, n := range names {
		parts[i] = n + "=" + format(n, u[n])
	}
	return strings.Join(parts, ",")
}
