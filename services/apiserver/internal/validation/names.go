package validation

import (
	"regexp"
	"strings"
)

const (
	dns1123LabelMaxLength     = 63
	dns1123SubdomainMaxLength = 253
	labelValueMaxLength       = 63
	totalAnnotationSizeLimit  = 256 * 1024
)

var (
	dns1123LabelRe     = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)
	dns1123SubdomainRe = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)
	qualifiedNameRe    = regexp.MustCompile(`^([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9]$`)
	labelValueRe       = regexp.MustCompile(`^(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?$`)
)

// IsDNS1123Label returns Kubernetes' messages for a value that is not an RFC 1123 label.
func IsDNS1123Label(v string) []string {
	var errs []string
	if len(v) > dns1123LabelMaxLength {
		errs = append(errs, "must be no more than 63 characters")
	}
	if !dns1123LabelRe.MatchString(v) {
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
	if !dns1123SubdomainRe.MatchString(v) {
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
	if name != "" && !qualifiedNameRe.MatchString(name) {
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
	if !labelValueRe.MatchString(v) {
		errs = append(errs, "a valid label must be an empty string or consist of alphanumeric characters, '-', '_' or '.', and must start and end with an alphanumeric character (e.g. 'MyValue',  or 'my_value',  or '12345', regex used for validation is '(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])?')")
	}
	return errs
}
