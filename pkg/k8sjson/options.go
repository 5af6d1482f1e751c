package k8sjson

import "strconv"

// Option changes how Unmarshal decodes.
type Option interface {
	apply(*options)
}

type options struct {
	validation FieldValidation
}

// FieldValidation is what Unmarshal does with unknown and duplicate fields,
// after Kubernetes' fieldValidation request parameter. It is an Option:
// Unmarshal(data, pod, k8sjson.Warn).
type FieldValidation uint8

const (
	// Strict reports every unknown and duplicate field in one *StrictError.
	// It is the default.
	Strict FieldValidation = iota
	// Warn drops unknown fields, keeps the last of duplicates, and returns a
	// warning for each (`unknown field "spec.foo"`).
	Warn
	// Ignore drops unknown fields and keeps the last of duplicates silently.
	Ignore
)

func (v FieldValidation) apply(o *options) { o.validation = v }

// String is the value of Kubernetes' fieldValidation parameter.
func (v FieldValidation) String() string {
	switch v {
	case Strict:
		return "Strict"
	case Warn:
		return "Warn"
	case Ignore:
		return "Ignore"
	}
	return "FieldValidation(" + strconv.Itoa(int(v)) + ")"
}
