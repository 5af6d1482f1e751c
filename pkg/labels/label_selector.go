package labels

import (
	"fmt"
	"slices"

	"podline.dev/pkg/field"
	metav1 "podline.dev/proto/meta/v1"
)

// The operators of metav1.LabelSelectorRequirement, spelled as in the API.
const (
	LabelSelectorOpIn           = "In"
	LabelSelectorOpNotIn        = "NotIn"
	LabelSelectorOpExists       = "Exists"
	LabelSelectorOpDoesNotExist = "DoesNotExist"
)

var selectorOps = map[string]Operator{
	LabelSelectorOpIn:           In,
	LabelSelectorOpNotIn:        NotIn,
	LabelSelectorOpExists:       Exists,
	LabelSelectorOpDoesNotExist: DoesNotExist,
}

// FromLabelSelector converts the structured selector of a Deployment,
// ReplicaSet or Service: every matchLabels pair and every matchExpressions
// requirement must hold. As in Kubernetes, a nil selector selects nothing
// and an empty one selects everything. A bad selector gives an error that
// wraps ErrInvalidSelector and lists each problem with its field path.
func FromLabelSelector(ls *metav1.LabelSelector) (Selector, error) {
	if ls == nil {
		return Nothing(), nil
	}
	if errs := ValidateLabelSelector(ls, field.NewPath("selector")); len(errs) > 0 {
		return nil, fmt.Errorf("%w: %s", ErrInvalidSelector, errs.Error())
	}
	reqs := make([]Requirement, 0, len(ls.GetMatchLabels())+len(ls.GetMatchExpressions()))
	for k, v := range ls.GetMatchLabels() {
		reqs = append(reqs, Requirement{key: k, operator: Equals, values: []string{v}})
	}
	for _, e := range ls.GetMatchExpressions() {
		r, err := NewRequirement(e.GetKey(), selectorOps[e.GetOperator()], e.GetValues())
		if err != nil { // unreachable after validation; kept so a gap in one cannot pass silently
			return nil, err
		}
		reqs = append(reqs, r)
	}
	return NewSelector(reqs...), nil
}

// ValidateLabelSelector reports every problem of ls as a field error under
// fldPath (e.g. spec.selector.matchExpressions[0].values). A nil selector is valid.
func ValidateLabelSelector(ls *metav1.LabelSelector, fldPath *field.Path) field.ErrorList {
	if ls == nil {
		return nil
	}
	var errs field.ErrorList
	labelsPath := fldPath.Child("matchLabels")
	keys := make([]string, 0, len(ls.GetMatchLabels()))
	for k := range ls.GetMatchLabels() {
		keys = append(keys, k)
	}
	slices.Sort(keys) // a stable order of errors
	for _, k := range keys {
		for _, msg := range ValidateKey(k) {
			errs = append(errs, field.Invalid(labelsPath, k, msg))
		}
		for _, msg := range ValidateValue(ls.GetMatchLabels()[k]) {
			errs = append(errs, field.Invalid(labelsPath.Key(k), ls.GetMatchLabels()[k], msg))
		}
	}
	for i, e := range ls.GetMatchExpressions() {
		p := fldPath.Child("matchExpressions").Index(i)
		for _, msg := range ValidateKey(e.GetKey()) {
			errs = append(errs, field.Invalid(p.Child("key"), e.GetKey(), msg))
		}
		switch e.GetOperator() {
		case LabelSelectorOpIn, LabelSelectorOpNotIn:
			if len(e.GetValues()) == 0 {
				errs = append(errs, field.Required(p.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case LabelSelectorOpExists, LabelSelectorOpDoesNotExist:
			if len(e.GetValues()) > 0 {
				errs = append(errs, field.Forbidden(p.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		default:
			errs = append(errs, field.NotSupported(p.Child("operator"), e.GetOperator(),
				[]string{LabelSelectorOpDoesNotExist, LabelSelectorOpExists, LabelSelectorOpIn, LabelSelectorOpNotIn}))
		}
		for j, v := range e.GetValues() {
			for _, msg := range ValidateValue(v) {
				errs = append(errs, field.Invalid(p.Child("values").Index(j), v, msg))
			}
		}
	}
	return errs
}
