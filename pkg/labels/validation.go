package labels

import (
	"fmt"
	"strings"
)

const (
	// MaxNameLength bounds a label value and the name part of a key.
	MaxNameLength = 63
	// MaxPrefixLength bounds the DNS subdomain prefix of a key.
	MaxPrefixLength = 253
)

const (
	nameCharsMsg = "name part must consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyName', 'my.name' or '123-abc')"
	valueMsg     = "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue', 'my_value' or '12345')"
	prefixMsg    = "prefix part must be a lowercase RFC 1123 subdomain: lowercase alphanumeric characters, '-' or '.', starting and ending with an alphanumeric character (e.g. 'example.com')"
)

// ValidateKey checks a label key: an optional DNS subdomain prefix and a
// slash, then a name of at most 63 characters. It returns one message per
// broken rule, in Kubernetes' words, or nil.
func ValidateKey(key string) []string {
	var errs []string
	name := key
	if i := strings.IndexByte(key, '/'); i >= 0 {
		prefix := key[:i]
		name = key[i+1:]
		switch {
		case prefix == "":
			errs = append(errs, "prefix part must be non-empty")
		case len(prefix) > MaxPrefixLength:
			errs = append(errs, fmt.Sprintf("prefix part must be no more than %d characters", MaxPrefixLength))
		case !isDNSSubdomain(prefix):
			errs = append(errs, prefixMsg)
		}
		if strings.IndexByte(name, '/') >= 0 {
			return append(errs, "a qualified name must have at most one '/' (an optional prefix, then a name)")
		}
	}
	switch {
	case name == "":
		errs = append(errs, "name part must be non-empty")
	case len(name) > MaxNameLength:
		errs = append(errs, fmt.Sprintf("name part must be no more than %d characters", MaxNameLength))
	case !isLabelName(name):
		errs = append(errs, nameCharsMsg)
	}
	return errs
}

// ValidateValue checks a label value: empty, or at most 63 characters of
// alphanumerics, '-', '_' and '.', starting and ending with an alphanumeric.
func ValidateValue(value string) []string {
	var errs []string
	if len(value) > MaxNameLength {
		errs = append(errs, fmt.Sprintf("must be no more than %d characters", MaxNameLength))
	}
	if value != "" && !isLabelName(value) {
		errs = append(errs, valueMsg)
	}
	return errs
}

func isAlnum(c byte) bool {
	return 'a' <= c && c <= 'z' || 'A' <= c && c <= 'Z' || '0' <= c && c <= '9'
}

// isLabelName is ([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9].
func isLabelName(s string) bool {
	if s == "" || !isAlnum(s[0]) || !isAlnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !isAlnum(c) && c != '-' && c != '_' && c != '.' {
			return false
		}
	}
	return true
}

// isDNSSubdomain is a lowercase RFC 1123 subdomain: dot-separated labels of
// [a-z0-9-], each starting and ending with [a-z0-9].
func isDNSSubdomain(s string) bool {
	for _, label := range strings.Split(s, ".") {
		if label == "" || label[0] == '-' || label[len(label)-1] == '-' {
			return false
		}
		for i := 0; i < len(label); i++ {
			if c := label[i]; !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-') {
				return false
			}
		}
	}
	return true
}
