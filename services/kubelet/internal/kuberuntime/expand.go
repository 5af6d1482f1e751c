package kuberuntime

import "strings"

// Expand replaces $(VAR) in s by mapping's value for VAR; references
// mapping does not know stay as written, and $$ escapes a $, as in
// Kubernetes' command, args and env expansion.
func Expand(s string, mapping func(string) (string, bool)) string {
	if !strings.Contains(s, "$") {
		return s
	}
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		if s[i] != '$' || i+1 >= len(s) {
			b.WriteByte(s[i])
			continue
		}
		switch s[i+1] {
		case '$':
			b.WriteByte('$')
			i++
		case '(':
			end := strings.IndexByte(s[i+2:], ')')
			if end < 0 {
				b.WriteString(s[i:])
				return b.String()
			}
			name := s[i+2 : i+2+end]
			if v, ok := mapping(name); ok {
				b.WriteString(v)
			} else {
				b.WriteString(s[i : i+3+end])
			}
			i += 2 + end
		default:
			b.WriteByte('$')
		}
	}
	return b.String()
}

// envMapping reads "K=V" pairs as a mapping.
func envMapping(env []string) func(string) (string, bool) {
	m := make(map[string]string, len(env))
	for _, kv := range env {
		k, v, _ := strings.Cut(kv, "=")
		m[k] = v
	}
	return func(k string) (string, bool) {
		v, ok := m[k]
		return v, ok
	}
}

func expandAll(in []string, mapping func(string) (string, bool)) []string {
	if in == nil {
		return nil
	}
	out := make([]string, len(in))
	for i, s := range in {
		out[i] = Expand(s, mapping)
	}
	return out
}
