package resource

import (
	"fmt"
	"math/big"
	"strconv"
	"strings"
)

// Resource names the kubelet reads.
const (
	CPU              = "cpu"
	Memory           = "memory"
	Pods             = "pods"
	EphemeralStorage = "ephemeral-storage"
)

var suffixes = map[string]*big.Rat{
	"":   big.NewRat(1, 1),
	"n":  big.NewRat(1, 1_000_000_000),
	"u":  big.NewRat(1, 1_000_000),
	"m":  big.NewRat(1, 1000),
	"k":  big.NewRat(1000, 1),
	"M":  big.NewRat(1_000_000, 1),
	"G":  big.NewRat(1_000_000_000, 1),
	"T":  new(big.Rat).SetInt64(1_000_000_000_000),
	"P":  new(big.Rat).SetInt64(1_000_000_000_000_000),
	"E":  new(big.Rat).SetInt64(1_000_000_000_000_000_000),
	"Ki": new(big.Rat).SetInt64(1 << 10),
	"Mi": new(big.Rat).SetInt64(1 << 20),
	"Gi": new(big.Rat).SetInt64(1 << 30),
	"Ti": new(big.Rat).SetInt64(1 << 40),
	"Pi": new(big.Rat).SetInt64(1 << 50),
	"Ei": new(big.Rat).SetInt64(1 << 60),
}

// parse reads s into an exact rational.
func parse(s string) (*big.Rat, error) {
	s = strings.TrimSpace(s)
	if s == "" {
		return nil, ErrFormat
	}
	i := 0
	if s[0] == '+' || s[0] == '-' {
		i++
	}
	for i < len(s) && (s[i] >= '0' && s[i] <= '9' || s[i] == '.') {
		i++
	}
	num, suffix := s[:i], s[i:]
	if num == "" || num == "+" || num == "-" {
		return nil, ErrFormat
	}
	r, ok := new(big.Rat).SetString(num)
	if !ok {
		return nil, ErrFormat
	}
	if mult, ok := suffixes[suffix]; ok {
		return r.Mul(r, mult), nil
	}
	if suffix[0] == 'e' || suffix[0] == 'E' {
		exp, err := strconv.Atoi(suffix[1:])
		if err != nil || exp > 30 || exp < -30 {
			return nil, ErrFormat
		}
		ten := new(big.Int).Exp(big.NewInt(10), big.NewInt(int64(abs(exp))), nil)
		if exp >= 0 {
			return r.Mul(r, new(big.Rat).SetInt(ten)), nil
		}
		return r.Quo(r, new(big.Rat).SetInt(ten)), nil
	}
	return nil, ErrFormat
}

func abs(n int) int {
	if n < 0 {
		return -n
	}
	return n
}

// ceil rounds r up to an integer, as Quantity.Value and MilliValue do.
func ceil(r *big.Rat) int64 {
	q, m := new(big.Int).QuoRem(r.Num(), r.Denom(), new(big.Int))
	if m.Sign() > 0 {
		q.Add(q, big.NewInt(1))
	}
	if !q.IsInt64() {
		if q.Sign() > 0 {
			return 1<<63 - 1
		}
		return -1 << 63
	}
	return q.Int64()
}

// Value is the quantity in whole units, rounded up ("1.5Gi" -> 1610612736,
// "100m" -> 1).
func Value(s string) (int64, error) {
	r, err := parse(s)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return ceil(r), nil
}

// MilliValue is the quantity in thousandths, rounded up ("100m" -> 100,
// "2" -> 2000).
func MilliValue(s string) (int64, error) {
	r, err := parse(s)
	if err != nil {
		return 0, fmt.Errorf("%q: %w", s, err)
	}
	return ceil(r.Mul(r, big.NewRat(1000, 1))), nil
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
