package validation

import (
	"podline.dev/pkg/field"
	"podline.dev/pkg/object"
	appsv1 "podline.dev/proto/apps/v1"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	rbacv1 "podline.dev/proto/rbac/v1"
	schedulingv1 "podline.dev/proto/scheduling/v1"
)

// ValidateKind checks the fields of a new or updated object beyond its
// metadata, with its kind's rules.
func ValidateKind(obj object.Object) field.ErrorList {
	switch o := obj.(type) {
	case *corev1.Pod:
		return ValidatePodSpec(o.GetSpec(), field.NewPath("spec"))
	case *appsv1.Deployment:
		return validateDeployment(o)
	case *appsv1.ReplicaSet:
		return validateReplicaSet(o)
	case *corev1.Service:
		return validateService(o)
	case *corev1.Node:
		return validateNode(o)
	case *corev1.Namespace:
		return validateNamespace(o)
	case *corev1.ConfigMap:
		return validateConfigMap(o)
	case *corev1.Secret:
		return validateSecret(o)
	case *corev1.Event:
		return validateEvent(o)
	case *corev1.Endpoints:
		return validateEndpoints(o)
	case *coordinationv1.Lease:
		return validateLease(o)
	case *discoveryv1.EndpointSlice:
		return validateEndpointSlice(o)
	case *corev1.ResourceQuota:
		return validateResourceQuota(o)
	case *schedulingv1.PriorityClass:
		return validatePriorityClass(o)
	case *rbacv1.Role:
		return validateRules(o.GetRules(), true)
	case *rbacv1.ClusterRole:
		return validateRules(o.GetRules(), false)
	case *rbacv1.RoleBinding:
		return validateBinding(o.GetRoleRef(), o.GetSubjects(), true)
	case *rbacv1.ClusterRoleBinding:
		return validateBinding(o.GetRoleRef(), o.GetSubjects(), false)
	}
	return nil
}

// ValidateKindUpdate checks what an update of obj (from old) may not change.
func ValidateKindUpdate(obj, old object.Object) field.ErrorList {
	switch o := obj.(type) {
	case *corev1.Pod:
		return ValidatePodUpdate(o, old.(*corev1.Pod))
	case *appsv1.Deployment:
		return selectorUpdate(o.GetSpec().GetSelector(), old.(*appsv1.Deployment).GetSpec().GetSelector())
	case *appsv1.ReplicaSet:
		return selectorUpdate(o.GetSpec().GetSelector(), old.(*appsv1.ReplicaSet).GetSpec().GetSelector())
	case *corev1.Service:
		return serviceUpdate(o, old.(*corev1.Service))
	case *corev1.Node:
		return nodeUpdate(o, old.(*corev1.Node))
	case *discoveryv1.EndpointSlice:
		return endpointSliceUpdate(o, old.(*discoveryv1.EndpointSlice))
	case *corev1.ConfigMap:
		return configMapUpdate(o, old.(*corev1.ConfigMap))
	case *corev1.Secret:
		return secretUpdate(o, old.(*corev1.Secret))
	case *schedulingv1.PriorityClass:
		return priorityClassUpdate(o, old.(*schedulingv1.PriorityClass))
	case *rbacv1.RoleBinding:
		return roleRefUpdate(o.GetRoleRef(), old.(*rbacv1.RoleBinding).GetRoleRef())
	case *rbacv1.ClusterRoleBinding:
		return roleRefUpdate(o.GetRoleRef(), old.(*rbacv1.ClusterRoleBinding).GetRoleRef())
	}
	return nil
}
