package validation

import (
	"regexp"
	"testing"
)

// Kubernetes' expressions, the oracle of the hand-written matchers.
var (
	dns1123LabelRe     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123SubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	qualifiedNameRe    = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	labelValueRe       = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

var nameSamples = []string{
	"", "a", "A", "0", "-", ".", "_", "a-b", "a--b", "-a", "a-", "a.b", "a..b", ".a", "a.", "a_b", "_a", "a_",
	"web-7c9d8f6b5-x2kqp", "kube-system", "example.com", "Example.com", "my.name", "MyName", "123-abc",
	"a.-b", "a-.b", "a/b", "é", "a b", "a\n", "x.y.z", "0.0.0", "node-role.kubernetes.io",
}

// checkMatchers compares each matcher with its expression on v.
func checkMatchers(t *testing.T, v string) {
	t.Helper()
	for _, c := range []struct {
		name string
		got  bool
		re   *regexp.Regexp
	}{
		{"DNS-1123 label", isDNS1123Label(v), dns1123LabelRe},
		{"DNS-1123 subdomain", isDNS1123Subdomain(v), dns1123SubdomainRe},
		{"qualified name part", isQualifiedNamePart(v), qualifiedNameRe},
		{"label value", v == "" || isQualifiedNamePart(v), labelValueRe},
	} {
		if want := c.re.MatchString(v); c.got != want {
			t.Errorf("%s %q: matcher says %v, %s says %v", c.name, v, c.got, c.re, want)
		}
	}
}

func TestNameMatchersAgreeWithKubernetesExpressions(t *testing.T) {
	for _, v := range nameSamples {
		checkMatchers(t, v)
	}
}

func FuzzNameMatchers(f *testing.F) {
	for _, v := range nameSamples {
		f.Add(v)
	}
	f.Fuzz(checkMatchers)
}
