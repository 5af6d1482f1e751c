package validation

import (
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/field"
	rbacv1 "podline.dev/proto/rbac/v1"
)

// RBACGroup is the API group of roles and of User and Group subjects.
const RBACGroup = "rbac.authorization.k8s.io"

func validateRules(rules []*rbacv1.PolicyRule, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	for i, r := range rules {
		rp := field.NewPath("rules").Index(i)
		if len(r.GetVerbs()) == 0 {
			errs = append(errs, field.Required(rp.Child("verbs"), "verbs must contain at least one value"))
		}
		if len(r.GetNonResourceUrls()) > 0 {
			if namespaced {
				errs = append(errs, field.Invalid(rp.Child("nonResourceURLs"), r.GetNonResourceUrls(), "namespaced rules cannot apply to non-resource URLs"))
			}
			if len(r.GetApiGroups()) > 0 || len(r.GetResources()) > 0 || len(r.GetResourceNames()) > 0 {
				errs = append(errs, field.Invalid(rp.Child("nonResourceURLs"), r.GetNonResourceUrls(), "rules cannot apply to both regular resources and non-resource URLs"))
			}
			continue
		}
		if len(r.GetApiGroups()) == 0 {
			errs = append(errs, field.Required(rp.Child("apiGroups"), "resource rules must supply at least one api group"))
		}
		if len(r.GetResources()) == 0 {
			errs = append(errs, field.Required(rp.Child("resources"), "resource rules must supply at least one resource"))
		}
	}
	return errs
}

func validateBinding(ref *rbacv1.RoleRef, subjects []*rbacv1.Subject, namespaced bool) field.ErrorList {
	var errs field.ErrorList
	rp := field.NewPath("roleRef")
	if ref.GetApiGroup() != RBACGroup {
		errs = append(errs, field.NotSupported(rp.Child("apiGroup"), ref.GetApiGroup(), []string{RBACGroup}))
	}
	kinds := []string{"ClusterRole"}
	if namespaced {
		kinds = []string{"ClusterRole", "Role"}
	}
	errs = append(errs, oneOf(ref.GetKind(), kinds, rp.Child("kind"))...)
	if ref.GetName() == "" {
		errs = append(errs, field.Required(rp.Child("name"), ""))
	}
	for i, s := range subjects {
		sp := field.NewPath("subjects").Index(i)
		if s.GetName() == "" {
			errs = append(errs, field.Required(sp.Child("name"), ""))
		}
		switch s.GetKind() {
		case "ServiceAccount":
			if s.GetApiGroup() != "" {
				errs = append(errs, field.NotSupported(sp.Child("apiGroup"), s.GetApiGroup(), []string{""}))
			}
			if !namespaced && s.GetNamespace() == "" {
				errs = append(errs, field.Required(sp.Child("namespace"), ""))
			}
			if s.GetName() != "" {
				errs = append(errs, dns1123Subdomain(s.GetName(), sp.Child("name"))...)
			}
		case "User", "Group":
			if s.GetApiGroup() != RBACGroup {
				errs = append(errs, field.NotSupported(sp.Child("apiGroup"), s.GetApiGroup(), []string{RBACGroup}))
			}
		default:
			errs = append(errs, field.NotSupported(sp.Child("kind"), s.GetKind(), []string{"Group", "ServiceAccount", "User"}))
		}
	}
	return errs
}

func roleRefUpdate(next, old *rbacv1.RoleRef) field.ErrorList {
	if !proto.Equal(next, old) {
		return field.ErrorList{field.Invalid(field.NewPath("roleRef"), next.GetName(), "cannot change roleRef")}
	}
	return nil
}
