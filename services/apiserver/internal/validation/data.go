package validation

import (
	"podline.dev/pkg/field"
	corev1 "podline.dev/proto/core/v1"
)

// maxDataSize is Kubernetes' limit on a ConfigMap's or Secret's data.
const maxDataSize = 1 << 20

func validateConfigMap(cm *corev1.ConfigMap) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for _, k := range sortedKeys(cm.GetData()) {
		errs = append(errs, configMapKey(k, field.NewPath("data").Key(k))...)
		size += len(cm.GetData()[k])
	}
	for k, v := range cm.GetBinaryData() {
		kp := field.NewPath("binaryData").Key(k)
		errs = append(errs, configMapKey(k, kp)...)
		if _, dup := cm.GetData()[k]; dup {
			errs = append(errs, field.Invalid(kp, k, "duplicate of key present in data"))
		}
		size += len(v)
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath(""), "", maxDataSize))
	}
	return errs
}

func configMapUpdate(next, old *corev1.ConfigMap) field.ErrorList {
	if !old.GetImmutable() {
		return nil
	}
	var errs field.ErrorList
	if !next.GetImmutable() {
		errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
	}
	if !sameStrings(next.GetData(), old.GetData()) {
		errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
	}
	if !sameBytes(next.GetBinaryData(), old.GetBinaryData()) {
		errs = append(errs, field.Forbidden(field.NewPath("binaryData"), "field is immutable when `immutable` is set"))
	}
	return errs
}

// Secret types whose keys Kubernetes requires.
var secretRequiredKeys = map[string][]string{
	"kubernetes.io/tls":              {"tls.crt", "tls.key"},
	"kubernetes.io/dockerconfigjson": {".dockerconfigjson"},
	"kubernetes.io/dockercfg":        {".dockercfg"},
	"kubernetes.io/basic-auth":       nil,
	"kubernetes.io/ssh-auth":         {"ssh-privatekey"},
}

func validateSecret(s *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	size := 0
	for k, v := range s.GetData() {
		errs = append(errs, configMapKey(k, field.NewPath("data").Key(k))...)
		size += len(v)
	}
	for k, v := range s.GetStringData() {
		errs = append(errs, configMapKey(k, field.NewPath("stringData").Key(k))...)
		size += len(v)
	}
	if size > maxDataSize {
		errs = append(errs, field.TooLong(field.NewPath("data"), "", maxDataSize))
	}
	for _, key := range secretRequiredKeys[s.GetType()] {
		_, inData := s.GetData()[key]
		_, inString := s.GetStringData()[key]
		if !inData && !inString {
			errs = append(errs, field.Required(field.NewPath("data").Key(key), ""))
		}
	}
	if s.GetType() == "kubernetes.io/service-account-token" && s.GetMetadata().GetAnnotations()["kubernetes.io/service-account.name"] == "" {
		errs = append(errs, field.Required(field.NewPath("metadata", "annotations").Key("kubernetes.io/service-account.name"), ""))
	}
	return errs
}

func secretUpdate(next, old *corev1.Secret) field.ErrorList {
	var errs field.ErrorList
	if next.GetType() != old.GetType() {
		errs = append(errs, field.Invalid(field.NewPath("type"), next.GetType(), msgImmutable))
	}
	if old.GetImmutable() {
		if !next.GetImmutable() {
			errs = append(errs, field.Forbidden(field.NewPath("immutable"), "field is immutable when `immutable` is set"))
		}
		if !sameBytes(next.GetData(), old.GetData()) || len(next.GetStringData()) > 0 {
			errs = append(errs, field.Forbidden(field.NewPath("data"), "field is immutable when `immutable` is set"))
		}
	}
	return errs
}

func sameStrings(a, b map[string]string) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || w != v {
			return false
		}
	}
	return true
}

func sameBytes(a, b map[string][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for k, v := range a {
		if w, ok := b[k]; !ok || string(w) != string(v) {
			return false
		}
	}
	return true
}
