package validation

import (
	"strings"
)

const (
	dns1123LabelMaxLength     = 63
	dns1123SubdomainMaxLength = 253
	labelValueMaxLength       = 63
	totalAnnotationSizeLimit  = 256 * 1024
)

// The name grammars below are Kubernetes' regular expressions, quoted in
// its messages; they are matched by hand because every object's name,
// labels and annotations go through them on every write. names_test.go
// checks each matcher against its expression.

// isDNS1123Label: [a-z0-9]([-a-z0-9]*[a-z0-9])?
func isDNS1123Label(v string) bool {
	return matchesEnds(v, isLowerAlnum, func(c byte) bool { return isLowerAlnum(c) || c == '-' })
}

// isDNS1123Subdomain: dot-separated DNS-1123 labels.
func isDNS1123Subdomain(v string) bool {
	for {
		label, rest, more := strings.Cut(v, ".")
		if !isDNS1123Label(label) {
			return false
		}
		if !more {
			return true
		}
		v = rest
	}
}

// isQualifiedNamePart: ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]
func isQualifiedNamePart(v string) bool {
	return matchesEnds(v, isAlnum, func(c byte) bool { return isAlnum(c) || c == '-' || c == '_' || c == '.' })
}

// matchesEnds reports whether v is non-empty, starts and ends with a byte
// end accepts, and has only bytes inner accepts between.
func matchesEnds(v string, end, inner func(byte) bool) bool {
	n := len(v)
	if n == 0 || !end(v[0]) || !end(v[n-1]) {
		return false
	}
	for i := 1; i < n-1; i++ {
		if !inner(v[i]) {
			return false
		}
	}
	return true
}

func isLowerAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

func isAlnum(c byte) bool { return isLowerAlnum(c) || 'A' <= c && c <= 'Z' }

// IsDNS1123Label returns Kubernetes' messages for a value that is not an RFC 1123 label.
func IsDNS1123Label(v string) []string {
	var errs []string
	if len(v) > dns1123LabelMaxLength {
		errs = append(errs, "must be no more than 63 characters")
	}
	if !isDNS1123Label(v) {
		errs = append(errs, "a lowercase RFC 1123 label must consist of lower case alphanumeric characters or '-', and must start and end with an alphanumeric character (e.g. 'my-name',  or '123-abc', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?')")
	}
	return errs
}

// IsDNS1123Subdomain returns Kubernetes' messages for a value that is not an RFC 1123 subdomain.
func IsDNS1123Subdomain(v string) []string {
	var errs []string
	if len(v) > dns1123SubdomainMaxLength {
		errs = append(errs, "must be no more than 253 characters")
	}
	if !isDNS1123Subdomain(v) {
		errs = append(errs, "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is '[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')")
	}
	return errs
}

// IsQualifiedName checks a label or annotation key: an optional DNS subdomain prefix and a name.
func IsQualifiedName(v string) []string {
	var errs []string
	name := v
	if i := strings.LastIndex(v, "/"); i >= 0 {
		prefix := v[:i]
		name = v[i+1:]
		if prefix == "" {
			errs = append(errs, "prefix part must be non-empty")
		} else {
			for _, e := range IsDNS1123Subdomain(prefix) {
				errs = append(errs, "prefix part "+e)
			}
		}
	}
	if name == "" {
		errs = append(errs, "name part must be non-empty")
	} else if len(name) > 63 {
		errs = append(errs, "name part must be no more than 63 characters")
	}
	if name != "" && !isQualifiedNamePart(name) {
		errs = append(errs, "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName',  or 'my.name',  or '123-abc', regex used for validation is '([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]')")
	}
	return errs
}

// IsValidLabelValue checks a label value.
func IsValidLabelValue(v string) []string {
	var errs []string
	if len(v) > labelValueMaxLength {
		errs = append(errs, "must be no more than 63 characters")
	}
	if v != "" && !isQualifiedNamePart(v) {
		errs = append(errs, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
	}
	return errs
}
