package validation

import (
	"fmt"
	"net/netip"
	"regexp"
	"slices"

	"podline.dev/pkg/field"
	"podline.dev/pkg/resource"
	metav1 "podline.dev/proto/meta/v1"
)

// Kubernetes' messages for numbers.
const (
	msgNonNegative   = "must be greater than or equal to 0"
	msgPositive      = "must be greater than 0"
	msgPortRange     = "must be between 1 and 65535, inclusive"
	msgImmutable     = "field is immutable"
	ianaSvcNameLimit = 15
)

var (
	ianaSvcNameRe   = regexp.MustCompile(`^[-a-z0-9]+$`)
	ianaLetterRe    = regexp.MustCompile(`[a-z]`)
	cIdentifierish  = regexp.MustCompile(`^[-._a-zA-Z][-._a-zA-Z0-9]*$`)
	configMapKeyRe  = regexp.MustCompile(`^[-._a-zA-Z0-9]+$`)
	percentRe       = regexp.MustCompile(`^[0-9]+%$`)
	validProtocols  = []string{"SCTP", "TCP", "UDP"}
	validEffects    = []string{"NoExecute", "NoSchedule", "PreferNoSchedule"}
	validSelectorOp = []string{"DoesNotExist", "Exists", "In", "NotIn"}
)

func nonNegative(v int64, p *field.Path) field.ErrorList {
	if v < 0 {
		return field.ErrorList{field.Invalid(p, v, msgNonNegative)}
	}
	return nil
}

func portNumber(v int32, p *field.Path) field.ErrorList {
	if v < 1 || v > 65535 {
		return field.ErrorList{field.Invalid(p, v, msgPortRange)}
	}
	return nil
}

// IsValidPortName checks an IANA_SVC_NAME, as Kubernetes names ports.
func IsValidPortName(v string) []string {
	var errs []string
	if len(v) > ianaSvcNameLimit {
		errs = append(errs, "must be no more than 15 characters")
	}
	if !ianaSvcNameRe.MatchString(v) {
		errs = append(errs, "must contain only alpha-numeric characters (a-z, 0-9), and hyphens (-)")
	}
	if len(v) > 0 && (v[0] == '-' || v[len(v)-1] == '-') {
		errs = append(errs, "must not begin or end with a hyphen")
	}
	if ianaSvcNameRe.MatchString(v) && !ianaLetterRe.MatchString(v) {
		errs = append(errs, "must contain at least one letter (a-z)")
	}
	for i := 1; i < len(v); i++ {
		if v[i] == '-' && v[i-1] == '-' {
			errs = append(errs, "must not contain consecutive hyphens")
			break
		}
	}
	return errs
}

func portName(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range IsValidPortName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func protocol(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if !slices.Contains(validProtocols, v) {
		return field.ErrorList{field.NotSupported(p, v, validProtocols)}
	}
	return nil
}

func oneOf(v string, valid []string, p *field.Path) field.ErrorList {
	if !slices.Contains(valid, v) {
		return field.ErrorList{field.NotSupported(p, v, valid)}
	}
	return nil
}

func dns1123Label(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range IsDNS1123Label(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func dns1123Subdomain(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range IsDNS1123Subdomain(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

func qualifiedName(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	for _, msg := range IsQualifiedName(v) {
		errs = append(errs, field.Invalid(p, v, msg))
	}
	return errs
}

// quantity checks a resource quantity and returns it in milli-units.
func quantity(v string, p *field.Path) (int64, field.ErrorList) {
	q, err := resource.Parse(v)
	if err != nil {
		return 0, field.ErrorList{field.Invalid(p, v, "must match the regex ^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$")}
	}
	m := q.MilliValue()
	if m < 0 {
		return m, field.ErrorList{field.Invalid(p, v, msgNonNegative)}
	}
	return m, nil
}

// intOrPercent checks an IntOrString that is a count or a percentage.
func intOrPercent(v *metav1.IntOrString, p *field.Path) field.ErrorList {
	if v == nil {
		return nil
	}
	if v.GetType() == 0 {
		return nonNegative(int64(v.GetIntVal()), p)
	}
	if !percentRe.MatchString(v.GetStrVal()) {
		return field.ErrorList{field.Invalid(p, v.GetStrVal(), "a valid percent string must be a numeric string followed by an ending '%' (e.g. '1%',  or '93%', regex used for validation is '[0-9]+%')")}
	}
	return nil
}

func ipAddress(v string, p *field.Path) field.ErrorList {
	if _, err := netip.ParseAddr(v); err != nil {
		return field.ErrorList{field.Invalid(p, v, "must be a valid IP address, (e.g. 10.9.8.7 or 2001:db8::ffff)")}
	}
	return nil
}

func cidr(v string, p *field.Path) field.ErrorList {
	if _, err := netip.ParsePrefix(v); err != nil {
		return field.ErrorList{field.Invalid(p, v, "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)")}
	}
	return nil
}

// envVarName is Kubernetes' rule for environment variable names.
func envVarName(v string, p *field.Path) field.ErrorList {
	if v == "" {
		return field.ErrorList{field.Required(p, "")}
	}
	if !cIdentifierish.MatchString(v) {
		return field.ErrorList{field.Invalid(p, v, "a valid environment variable name must consist of alphabetic characters, digits, '_', '-', or '.', and must not start with a digit (e.g. 'my.env-name',  or 'MY_ENV.NAME',  or 'MyEnvName1', regex used for validation is '[-._a-zA-Z][-._a-zA-Z0-9]*')")}
	}
	return nil
}

// configMapKey is Kubernetes' rule for ConfigMap and Secret data keys.
func configMapKey(v string, p *field.Path) field.ErrorList {
	var errs field.ErrorList
	if len(v) > dns1123SubdomainMaxLength {
		errs = append(errs, field.Invalid(p, v, "must be no more than 253 characters"))
	}
	if !configMapKeyRe.MatchString(v) {
		errs = append(errs, field.Invalid(p, v, "a valid config key must consist of alphanumeric characters, '-', '_' or '.' (e.g. 'key.name',  or 'KEY_NAME',  or 'key-name', regex used for validation is '[-._a-zA-Z0-9]+')"))
	}
	if v == "." || v == ".." {
		errs = append(errs, field.Invalid(p, v, fmt.Sprintf("must not be '%s'", v)))
	}
	return errs
}

// labelSelector checks a LabelSelector's syntax.
func labelSelector(sel *metav1.LabelSelector, p *field.Path) field.ErrorList {
	if sel == nil {
		return nil
	}
	errs := ValidateLabels(sel.GetMatchLabels(), p.Child("matchLabels"))
	for i, req := range sel.GetMatchExpressions() {
		rp := p.Child("matchExpressions").Index(i)
		errs = append(errs, qualifiedName(req.GetKey(), rp.Child("key"))...)
		switch req.GetOperator() {
		case "In", "NotIn":
			if len(req.GetValues()) == 0 {
				errs = append(errs, field.Required(rp.Child("values"), "must be specified when `operator` is 'In' or 'NotIn'"))
			}
		case "Exists", "DoesNotExist":
			if len(req.GetValues()) > 0 {
				errs = append(errs, field.Forbidden(rp.Child("values"), "may not be specified when `operator` is 'Exists' or 'DoesNotExist'"))
			}
		default:
			errs = append(errs, field.NotSupported(rp.Child("operator"), req.GetOperator(), validSelectorOp))
		}
		for j, v := range req.GetValues() {
			for _, msg := range IsValidLabelValue(v) {
				errs = append(errs, field.Invalid(rp.Child("values").Index(j), v, msg))
			}
		}
	}
	return errs
}
