package resource

import (
	"fmt"
	"strconv"
	"strings"

	quantity "podline.dev/pkg/resource"
)

// Resource names the kubelet reads.
const (
	CPU              = "cpu"
	Memory           = "memory"
	Pods             = "pods"
	EphemeralStorage = "ephemeral-storage"
)

// Value is the quantity in whole units, rounded up ("1.5Gi" -> 1610612736,
// "100m" -> 1).
func Value(s string) (int64, error) {
	v, err := quantity.ParseValue(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return v, nil
}

// MilliValue is the quantity in thousandths, rounded up ("100m" -> 100,
// "2" -> 2000).
func MilliValue(s string) (int64, error) {
	v, err := quantity.ParseMilli(strings.TrimSpace(s))
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return v, nil
}

// Amount is one resource's quantity in the unit the kubelet counts it in:
// millicores for cpu, whole units for everything else.
func Amount(name, s string) (int64, error) {
	if name == CPU {
		return MilliValue(s)
	}
	return Value(s)
}

// Format writes an amount back as a quantity string: "250m" or "2" for
// cpu, a binary suffix when it divides evenly ("512Mi"), else the number.
func Format(name string, amount int64) string {
	if name == CPU {
		if amount%1000 == 0 {
			return strconv.FormatInt(amount/1000, 10)
		}
		return strconv.FormatInt(amount, 10) + "m"
	}
	for _, s := range []struct {
		suffix string
		shift  uint
	}{{"Ei", 60}, {"Pi", 50}, {"Ti", 40}, {"Gi", 30}, {"Mi", 20}, {"Ki", 10}} {
		if amount != 0 && amount%(1<<s.shift) == 0 {
			return strconv.FormatInt(amount>>s.shift, 10) + s.suffix
		}
	}
	return strconv.FormatInt(amount, 10)
}

// List is a set of amounts by resource name.
type List map[string]int64

// ParseList reads a map of quantity strings (a container's requests, a
// node's allocatable).
func ParseList(m map[string]string) (List, error) {
	out := make(List, len(m))
	for name, s := range m {
		v, err := Amount(name, s)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", name, err)
		}
		out[name] = v
	}
	return out, nil
}

// Add adds other into l.
func (l List) Add(other List) {
	for k, v := range other {
		l[k] += v
	}
}

// Max raises each of l's entries to other's where other's is larger.
func (l List) Max(other List) {
	for k, v := range other {
		if v > l[k] {
			l[k] = v
		}
	}
}

// Strings formats l back to quantity strings.
func (l List) Strings() map[string]string {
	out := make(map[string]string, len(l))
	for k, v := range l {
		out[k] = Format(k, v)
	}
	return out
}
