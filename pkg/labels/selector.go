package labels

import (
	"slices"
	"strconv"
	"strings"
)

// Operator relates a label key to the values of a Requirement.
type Operator string

const (
	Equals       Operator = "="
	NotEquals    Operator = "!="
	In           Operator = "in"
	NotIn        Operator = "notin"
	Exists       Operator = "exists"
	DoesNotExist Operator = "!"
	GreaterThan  Operator = "gt"
	LessThan     Operator = "lt"
)

// Requirement is one condition on one label: "app=web", "env in (a,b)", "!canary".
// The zero value is not valid; build one with NewRequirement.
type Requirement struct {
	key      string
	operator Operator
	values   []string // sorted, deduplicated
}

// NewRequirement validates key and values for the operator: Equals and
// NotEquals take one value, In and NotIn one or more, Exists and
// DoesNotExist none, GreaterThan and LessThan one integer.
func NewRequirement(key string, op Operator, values []string) (Requirement, error) {
	if errs := ValidateKey(key); len(errs) > 0 {
		return Requirement{}, invalidRequirement("invalid label key %q: %s", key, strings.Join(errs, "; "))
	}
	switch op {
	case Equals, NotEquals:
		if len(values) != 1 {
			return Requirement{}, invalidRequirement("operator %q for key %q takes exactly one value, got %d", op, key, len(values))
		}
	case In, NotIn:
		if len(values) == 0 {
			return Requirement{}, invalidRequirement("operator %q for key %q needs at least one value", op, key)
		}
	case Exists, DoesNotExist:
		if len(values) != 0 {
			return Requirement{}, invalidRequirement("operator %q for key %q takes no values, got %d", op, key, len(values))
		}
	case GreaterThan, LessThan:
		if len(values) != 1 {
			return Requirement{}, invalidRequirement("operator %q for key %q takes exactly one value, got %d", op, key, len(values))
		}
		if _, err := strconv.ParseInt(values[0], 10, 64); err != nil {
			return Requirement{}, invalidRequirement("operator %q for key %q needs an integer value, got %q", op, key, values[0])
		}
		return Requirement{key: key, operator: op, values: []string{values[0]}}, nil
	default:
		return Requirement{}, invalidRequirement("%q is not a valid label selector operator", op)
	}
	for _, v := range values {
		if errs := ValidateValue(v); len(errs) > 0 {
			return Requirement{}, invalidRequirement("invalid label value %q for key %q: %s", v, key, strings.Join(errs, "; "))
		}
	}
	vs := slices.Clone(values)
	slices.Sort(vs)
	return Requirement{key: key, operator: op, values: slices.Compact(vs)}, nil
}

// Key is the label key the requirement tests.
func (r Requirement) Key() string { return r.key }

// Operator is how the key is tested.
func (r Requirement) Operator() Operator { return r.operator }

// Values are the requirement's values, sorted; the caller must not change them.
func (r Requirement) Values() []string { return r.values }

// Matches reports whether labels satisfy the requirement. A key that is
// absent satisfies NotEquals, NotIn and DoesNotExist, as in Kubernetes.
func (r Requirement) Matches(labels Set) bool {
	v, has := labels[r.key]
	switch r.operator {
	case Equals:
		return has && v == r.values[0]
	case NotEquals:
		return !has || v != r.values[0]
	case In:
		return has && r.hasValue(v)
	case NotIn:
		return !has || !r.hasValue(v)
	case Exists:
		return has
	case DoesNotExist:
		return !has
	case GreaterThan, LessThan:
		if !has {
			return false
		}
		got, err := strconv.ParseInt(v, 10, 64)
		if err != nil {
			return false
		}
		want, _ := strconv.ParseInt(r.values[0], 10, 64)
		if r.operator == GreaterThan {
			return got > want
		}
		return got < want
	}
	return false
}

func (r Requirement) hasValue(v string) bool {
	_, found := slices.BinarySearch(r.values, v)
	return found
}

// String renders the requirement in selector syntax.
func (r Requirement) String() string {
	switch r.operator {
	case Equals:
		return r.key + "=" + r.values[0]
	case NotEquals:
		return r.key + "!=" + r.values[0]
	case In, NotIn:
		return r.key + " " + string(r.operator) + " (" + strings.Join(r.values, ",") + ")"
	case Exists:
		return r.key
	case DoesNotExist:
		return "!" + r.key
	case GreaterThan:
		return r.key + ">" + r.values[0]
	case LessThan:
		return r.key + "<" + r.values[0]
	}
	return ""
}

// Selector decides which label sets it selects.
type Selector interface {
	// Matches reports whether labels satisfy every requirement.
	Matches(labels Set) bool
	// Empty reports whether the selector selects everything.
	Empty() bool
	// String is the canonical selector string: Parse(String()) selects the same sets.
	String() string
	// Requirements are the requirements, sorted by key; the caller must not change them.
	Requirements() []Requirement
}

// Everything selects every label set, including the empty one.
func Everything() Selector { return requirements(nil) }

// Nothing selects no label set. Its String, "<nothing>", does not parse, so
// it cannot be sent to the apiserver by mistake as "select everything".
func Nothing() Selector { return nothing{} }

// NewSelector is the conjunction of reqs.
func NewSelector(reqs ...Requirement) Selector {
	rs := slices.Clone(reqs)
	sortRequirements(rs)
	return requirements(rs)
}

// SelectorFromSet selects label sets that contain every key=value of set;
// an empty or nil set selects everything. The set is not validated: use it
// for label sets the apiserver has already checked (matchLabels, a
// controller's own labels).
func SelectorFromSet(set Set) Selector {
	rs := make(requirements, 0, len(set))
	for k, v := range set {
		rs = append(rs, Requirement{key: k, operator: Equals, values: []string{v}})
	}
	sortRequirements(rs)
	return rs
}

func sortRequirements(rs []Requirement) {
	slices.SortStableFunc(rs, func(a, b Requirement) int { return strings.Compare(a.key, b.key) })
}

type requirements []Requirement

func (rs requirements) Matches(labels Set) bool {
	for _, r := range rs {
		if !r.Matches(labels) {
			return false
		}
	}
	return true
}

func (rs requirements) Empty() bool { return len(rs) == 0 }

func (rs requirements) String() string {
	parts := make([]string, len(rs))
	for i, r := range rs {
		parts[i] = r.String()
	}
	return strings.Join(parts, ",")
}

func (rs requirements) Requirements() []Requirement { return rs }

type nothing struct{}

func (nothing) Matches(Set) bool            { return false }
func (nothing) Empty() bool                 { return false }
func (nothing) String() string              { return "<nothing>" }
func (nothing) Requirements() []Requirement { return nil }
