package resource

import (
	"fmt"
	"math"
	"math/big"
	"math/bits"
	"strings"
)

// Quantity is an exact amount: num/den units. The zero Quantity is 0.
// Quantities whose value and milli-value fit in int64 (all real ones) are
// parsed without math/big and keep both values precomputed.
type Quantity struct {
	num *big.Int
	den *big.Int
	s   string
	// small is set when the amount is sn/sd in int64 and value and milli
	// were computed from it; num and den are then nil.
	small        bool
	sn, sd       int64
	value, milli int64
}

// Parse reads a Kubernetes quantity.
func Parse(s string) (Quantity, error) {
	str := strings.TrimSpace(s)
	if str == "" {
		return Quantity{}, ErrFormatWrong
	}
	neg := false
	i := 0
	if str[0] == '+' || str[0] == '-' {
		neg = str[0] == '-'
		i++
	}
	// The number: digits with at most one '.'.
	start := i
	seenDot, seenDigit := false, false
	for i < len(str) {
		c := str[i]
		if c == '.' && !seenDot {
			seenDot = true
		} else if c >= '0' && c <= '9' {
			seenDigit = true
		} else {
			break
		}
		i++
	}
	if !seenDigit {
		return Quantity{}, ErrFormatWrong
	}
	number, suffix := str[start:i], str[i:]
	whole, frac, _ := strings.Cut(number, ".")
	base, exp, err := parseSuffix(suffix)
	if err != nil {
		return Quantity{}, err
	}
	if q, ok := parseSmall(whole, frac, base, exp, neg); ok {
		q.s = s
		return q, nil
	}
	num, ok := new(big.Int).SetString(whole+frac, 10)
	if !ok {
		return Quantity{}, ErrFormatWrong
	}
	den := pow(10, len(frac))
	switch {
	case exp >= 0:
		num.Mul(num, pow(base, exp))
	default:
		den.Mul(den, pow(base, -exp))
	}
	if neg {
		num.Neg(num)
	}
	return Quantity{num: num, den: den, s: s}, nil
}

// MustParse is Parse for constants in code and tests; it panics on a bad quantity.
func MustParse(s string) Quantity {
	q, err := Parse(s)
	if err != nil {
		panic(fmt.Sprintf("resource: cannot parse %q: %v", s, err))
	}
	return q
}

// ParseMilli returns the quantity in thousandths of a unit, rounded up.
func ParseMilli(s string) (int64, error) {
	q, err := Parse(s)
	if err != nil {
		return 0, err
	}
	return q.MilliValue(), nil
}

// ParseValue returns the quantity in units, rounded up.
func ParseValue(s string) (int64, error) {
	q, err := Parse(s)
	if err != nil {
		return 0, err
	}
	return q.Value(), nil
}

// parseSuffix returns the suffix as base^exp.
func parseSuffix(s string) (base, exp int, err error) {
	switch s {
	case "":
		return 10, 0, nil
	case "n":
		return 10, -9, nil
	case "u":
		return 10, -6, nil
	case "m":
		return 10, -3, nil
	case "k":
		return 10, 3, nil
	case "M":
		return 10, 6, nil
	case "G":
		return 10, 9, nil
	case "T":
		return 10, 12, nil
	case "P":
		return 10, 15, nil
	case "E":
		return 10, 18, nil
	case "Ki":
		return 2, 10, nil
	case "Mi":
		return 2, 20, nil
	case "Gi":
		return 2, 30, nil
	case "Ti":
		return 2, 40, nil
	case "Pi":
		return 2, 50, nil
	case "Ei":
		return 2, 60, nil
	}
	if s[0] == 'e' || s[0] == 'E' {
		rest := s[1:]
		sign := 1
		if rest != "" && (rest[0] == '+' || rest[0] == '-') {
			if rest[0] == '-' {
				sign = -1
			}
			rest = rest[1:]
		}
		if rest == "" || len(rest) > 4 {
			return 0, 0, ErrSuffix
		}
		n := 0
		for _, c := range rest {
			if c < '0' || c > '9' {
				return 0, 0, ErrFormatWrong
			}
			n = n*10 + int(c-'0')
		}
		return 10, sign * n, nil
	}
	return 0, 0, ErrSuffix
}

func pow(base, exp int) *big.Int {
	return new(big.Int).Exp(big.NewInt(int64(base)), big.NewInt(int64(exp)), nil)
}

// parseSmall computes value and milli-value in int64 when nothing
// overflows: digits × base^exp / 10^len(frac), rounded up.
func parseSmall(whole, frac string, base, exp int, neg bool) (Quantity, bool) {
	if len(whole)+len(frac) > 18 {
		return Quantity{}, false
	}
	var num uint64
	for _, part := range []string{whole, frac} {
		for i := 0; i < len(part); i++ {
			num = num*10 + uint64(part[i]-'0')
		}
	}
	den := uint64(1)
	for range len(frac) {
		den *= 10
	}
	var ok bool
	for range max(exp, -exp) {
		if exp > 0 {
			num, ok = mul(num, uint64(base))
		} else {
			den, ok = mul(den, uint64(base))
		}
		if !ok {
			return Quantity{}, false
		}
	}
	milliNum, ok := mul(num, 1000)
	if !ok || num > math.MaxInt64 || den > math.MaxInt64 {
		return Quantity{}, false
	}
	q := Quantity{small: true, sn: int64(num), sd: int64(den), value: int64(ceilDiv(num, den)), milli: int64(ceilDiv(milliNum, den))}
	if neg {
		// Rounding up a negative amount moves it towards zero.
		q.sn, q.value, q.milli = -q.sn, -int64(num/den), -int64(milliNum/den)
	}
	return q, true
}

func mul(a, b uint64) (uint64, bool) {
	hi, lo := bits.Mul64(a, b)
	return lo, hi == 0
}

func ceilDiv(a, b uint64) uint64 {
	q := a / b
	if a%b != 0 {
		q++
	}
	return q
}

// scaled is ceil(q × mult) saturated to int64.
func (q Quantity) scaled(mult int64) int64 {
	if q.num == nil {
		return 0
	}
	n := new(big.Int).Mul(q.num, big.NewInt(mult))
	quo, rem := new(big.Int).QuoRem(n, q.den, new(big.Int))
	if rem.Sign() > 0 {
		quo.Add(quo, big.NewInt(1))
	}
	if !quo.IsInt64() {
		if quo.Sign() < 0 {
			return math.MinInt64
		}
		return math.MaxInt64
	}
	return quo.Int64()
}

// Value is the quantity in units, rounded up ("100m" is 1, "64Mi" is 67108864).
func (q Quantity) Value() int64 {
	if q.small {
		return q.value
	}
	return q.scaled(1)
}

// MilliValue is the quantity in thousandths, rounded up ("100m" is 100, "2" is 2000).
func (q Quantity) MilliValue() int64 {
	if q.small {
		return q.milli
	}
	return q.scaled(1000)
}

// Cmp compares q with r: -1, 0 or +1.
func (q Quantity) Cmp(r Quantity) int {
	a, b := q.rat(), r.rat()
	return a.Cmp(b)
}

// IsZero reports whether q is 0.
func (q Quantity) IsZero() bool {
	if q.small {
		return q.sn == 0
	}
	return q.num == nil || q.num.Sign() == 0
}

func (q Quantity) rat() *big.Rat {
	if q.small {
		return big.NewRat(q.sn, q.sd)
	}
	if q.num == nil {
		return new(big.Rat)
	}
	return new(big.Rat).SetFrac(q.num, q.den)
}

// String is the text the quantity was parsed from.
func (q Quantity) String() string {
	if q.num == nil && !q.small {
		return "0"
	}
	return q.s
}
