package registry

import (
	"regexp"
	"testing"
)

func TestNewUUIDIsARandomVersion4UUID(t *testing.T) {
	v4 := regexp.MustCompile(`^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$`)
	seen := map[string]bool{}
	for range 100 {
		u := newUUID()
		if !v4.MatchString(u) {
			t.Fatalf("%q is not a version 4 UUID", u)
		}
		if seen[u] {
			t.Fatalf("%q came twice", u)
		}
		seen[u] = true
	}
}

func TestRandomSuffixIsFiveCharactersOfKubernetesAlphabet(t *testing.T) {
	suffix := regexp.MustCompile(`^[bcdfghjklmnpqrstvwxz2456789]{5}$`)
	seen := map[string]bool{}
	for range 100 {
		s := randomSuffix()
		if !suffix.MatchString(s) {
			t.Fatalf("suffix %q", s)
		}
		seen[s] = true
	}
	if len(seen) < 90 {
		t.Fatalf("100 suffixes, %d different", len(seen))
	}
}
