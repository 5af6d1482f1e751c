package validation

import (
	"strings"

	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
)

// Kubernetes' bounds on priority classes.
const (
	highestUserPriority = 1000000000
	systemPrefix        = "system-"
)

// systemPriorityClasses are the reserved names and their values.
var systemPriorityClasses = map[string]int32{"system-node-critical": 2000001000, "system-cluster-critical": 2000000000}

func validatePriorityClass(pc *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	name := pc.GetMetadata().GetName()
	if v, system := systemPriorityClasses[name]; system {
		if pc.GetValue() != v {
			errs = append(errs, field.Forbidden(field.NewPath("value"), "value of a system priority class is fixed"))
		}
	} else {
		if strings.HasPrefix(name, systemPrefix) {
			errs = append(errs, field.Forbidden(field.NewPath("metadata", "name"), "priority class names with '"+systemPrefix+"' prefix are reserved for system use only"))
		}
		if pc.GetValue() > highestUserPriority {
			errs = append(errs, field.Forbidden(field.NewPath("value"), "maximum allowed value of a user defined priority is 1000000000"))
		}
	}
	if pc.PreemptionPolicy != nil {
		errs = append(errs, oneOf(pc.GetPreemptionPolicy(), preemptPolicies, field.NewPath("preemptionPolicy"))...)
	}
	return errs
}

func priorityClassUpdate(next, old *schedulingv1.PriorityClass) field.ErrorList {
	var errs field.ErrorList
	if next.GetValue() != old.GetValue() {
		errs = append(errs, field.Forbidden(field.NewPath("value"), "may not be changed in an update."))
	}
	if next.GetPreemptionPolicy() != old.GetPreemptionPolicy() {
		errs = append(errs, field.Invalid(field.NewPath("preemptionPolicy"), next.GetPreemptionPolicy(), msgImmutable))
	}
	return errs
}

var quotaScopes = []string{"BestEffort", "CrossNamespacePodAffinity", "NotBestEffort", "NotTerminating", "PriorityClass", "Terminating", "VolumeAttributesClass"}

func validateResourceQuota(q *corev1.ResourceQuota) field.ErrorList {
	var errs field.ErrorList
	hp := field.NewPath("spec", "hard")
	for _, k := range sortedKeys(q.GetSpec().GetHard()) {
		kp := hp.Key(k)
		errs = append(errs, qualifiedName(k, kp)...)
		_, qerrs := quantity(q.GetSpec().GetHard()[k], kp)
		errs = append(errs, qerrs...)
	}
	for i, s := range q.GetSpec().GetScopes() {
		errs = append(errs, oneOf(s, quotaScopes, field.NewPath("spec", "scopes").Index(i))...)
	}
	return errs
}
