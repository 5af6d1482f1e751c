package resource

import (
	"errors"
	"math"
	"testing"
)

func TestParse(t *testing.T) {
	tests := []struct {
		in          string
		value, mill int64
	}{
		{"0", 0, 0},
		{"1", 1, 1000},
		{"100m", 1, 100},
		{"250m", 1, 250},
		{"1.5", 2, 1500},
		{"0.5m", 1, 1},
		{"1500m", 2, 1500},
		{"64Mi", 64 << 20, 64 << 20 * 1000},
		{"1Gi", 1 << 30, 1 << 30 * 1000},
		{"1.5Gi", 3 << 29, 3 << 29 * 1000},
		{"128974848", 128974848, 128974848000},
		{"129e6", 129000000, 129000000000},
		{"129M", 129000000, 129000000000},
		{"123Ki", 125952, 125952000},
		{"500k", 500000, 500000000},
		{"1e3", 1000, 1000000},
		{"1E-3", 1, 1},
		{"100n", 1, 1},
		{"100u", 1, 1},
		{"+2", 2, 2000},
		{"-2", -2, -2000},
		{".5", 1, 500},
		{"110", 110, 110000},
		{"8Ei", math.MaxInt64, math.MaxInt64},
	}
	for _, tt := range tests {
		q, err := Parse(tt.in)
		if err != nil {
			t.Errorf("Parse(%q): %v", tt.in, err)
			continue
		}
		if got := q.Value(); got != tt.value {
			t.Errorf("Parse(%q).Value() = %d, want %d", tt.in, got, tt.value)
		}
		if got := q.MilliValue(); got != tt.mill {
			t.Errorf("Parse(%q).MilliValue() = %d, want %d", tt.in, got, tt.mill)
		}
	}
}

func TestParseRejects(t *testing.T) {
	tests := map[string]error{
		"":      ErrFormatWrong,
		"abc":   ErrFormatWrong,
		"1.2.3": ErrSuffix,
		"5Zi":   ErrSuffix,
		"1mm":   ErrSuffix,
		"m":     ErrFormatWrong,
		"1e":    ErrSuffix,
		"1ex":   ErrFormatWrong,
	}
	for in, want := range tests {
		if _, err := Parse(in); !errors.Is(err, want) {
			t.Errorf("Parse(%q) = %v, want %v", in, err, want)
		}
	}
}

func TestCmp(t *testing.T) {
	if MustParse("1").Cmp(MustParse("1000m")) != 0 || MustParse("1Ki").Cmp(MustParse("1k")) != 1 || !MustParse("0m").IsZero() {
		t.Error("comparison is wrong")
	}
}

func TestSmallAndBigPathsAgree(t *testing.T) {
	for _, s := range []string{"0", "1", "100m", "0.5m", "1.5Gi", "129e6", "1E-3", "123Ki", "-2", "-1.5", "-100m", "999999999999999999", "9.5Ei", "7Ei", "100n", "3u"} {
		q := MustParse(s)
		big := Quantity{num: q.num, den: q.den}
		if q.small {
			r := q.rat()
			big = Quantity{num: r.Num(), den: r.Denom()}
		}
		if q.Value() != big.scaled(1) || q.MilliValue() != big.scaled(1000) {
			t.Errorf("%s: fast %d/%d, exact %d/%d", s, q.Value(), q.MilliValue(), big.scaled(1), big.scaled(1000))
		}
	}
}

func BenchmarkParse(b *testing.B) {
	for b.Loop() {
		_, _ = Parse("250m")
		_, _ = Parse("64Mi")
	}
}
