package validation

import (
	"fmt"
	"sort"
	"strings"

	"podline.dev/pkg/field"
	metav1 "podline.dev/proto/meta/v1"
)

// nameIsLabel lists kinds whose names must be RFC 1123 labels, not subdomains.
var nameIsLabel = map[string]bool{"Namespace": true, "Service": true}

// nameIsPathSegment lists kinds whose names need only be a path segment,
// as Kubernetes' RBAC names ("system:node", "system:kube-scheduler").
var nameIsPathSegment = map[string]bool{"Role": true, "ClusterRole": true, "RoleBinding": true, "ClusterRoleBinding": true}

// IsPathSegmentName returns Kubernetes' messages for a name that cannot be
// one segment of a URL path.
func IsPathSegmentName(v string) []string {
	var msgs []string
	if v == "." || v == ".." {
		msgs = append(msgs, fmt.Sprintf("may not be '%s'", v))
	}
	for _, bad := range []string{"/", "%"} {
		if strings.Contains(v, bad) {
			msgs = append(msgs, fmt.Sprintf("may not contain '%s'", bad))
		}
	}
	return msgs
}

// ValidateObjectMeta checks metadata of a new or updated object.
func ValidateObjectMeta(md *metav1.ObjectMeta, namespaced bool, kind string) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("metadata")
	if md.GetName() == "" {
		errs = append(errs, field.Required(p.Child("name"), "name or generateName is required"))
	} else {
		check := IsDNS1123Subdomain
		if nameIsLabel[kind] {
			check = IsDNS1123Label
		}
		if nameIsPathSegment[kind] {
			check = IsPathSegmentName
		}
		for _, msg := range check(md.GetName()) {
			errs = append(errs, field.Invalid(p.Child("name"), md.GetName(), msg))
		}
	}
	if namespaced {
		for _, msg := range IsDNS1123Label(md.GetNamespace()) {
			errs = append(errs, field.Invalid(p.Child("namespace"), md.GetNamespace(), msg))
		}
	} else if md.GetNamespace() != "" {
		errs = append(errs, field.Forbidden(p.Child("namespace"), "not allowed on this type"))
	}
	errs = append(errs, ValidateLabels(md.GetLabels(), p.Child("labels"))...)
	errs = append(errs, validateAnnotations(md.GetAnnotations(), p.Child("annotations"))...)
	for i, ref := range md.GetOwnerReferences() {
		rp := p.Child("ownerReferences").Index(i)
		if ref.GetApiVersion() == "" {
			errs = append(errs, field.Invalid(rp.Child("apiVersion"), ref.GetApiVersion(), "version must not be empty"))
		}
		if ref.GetKind() == "" {
			errs = append(errs, field.Invalid(rp.Child("kind"), ref.GetKind(), "kind must not be empty"))
		}
		if ref.GetName() == "" {
			errs = append(errs, field.Invalid(rp.Child("name"), ref.GetName(), "name must not be empty"))
		}
		if ref.GetUid() == "" {
			errs = append(errs, field.Invalid(rp.Child("uid"), ref.GetUid(), "uid must not be empty"))
		}
	}
	return errs
}

// ValidateObjectMetaUpdate checks what an update may not change.
func ValidateObjectMetaUpdate(next, old *metav1.ObjectMeta) field.ErrorList {
	var errs field.ErrorList
	p := field.NewPath("metadata")
	if next.GetName() != old.GetName() {
		errs = append(errs, field.Invalid(p.Child("name"), next.GetName(), "field is immutable"))
	}
	if next.GetNamespace() != old.GetNamespace() {
		errs = append(errs, field.Invalid(p.Child("namespace"), next.GetNamespace(), "field is immutable"))
	}
	return errs
}

// ValidateLabels checks label keys and values.
func ValidateLabels(labels map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, k := range sortedKeys(labels) {
		for _, msg := range IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p, k, msg))
		}
		for _, msg := range IsValidLabelValue(labels[k]) {
			errs = append(errs, field.Invalid(p, labels[k], msg))
		}
	}
	return errs
}

func validateAnnotations(annotations map[string]string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	total := 0
	for _, k := range sortedKeys(annotations) {
		for _, msg := range IsQualifiedName(k) {
			errs = append(errs, field.Invalid(p, k, msg))
		}
		total += len(k) + len(annotations[k])
	}
	if total > totalAnnotationSizeLimit {
		errs = append(errs, field.TooLong(p, "", totalAnnotationSizeLimit))
	}
	return errs
}

func sortedKeys(m map[string]string) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}
