package labels

import (
	"sort"
	"strings"
)

// Set is a map of label keys to values, as in metadata.labels. A plain
// map[string]string converts to it implicitly.
type Set map[string]string

// Has reports whether key is set.
func (s Set) Has(key string) bool {
	_, ok := s[key]
	return ok
}

// Get returns the value of key, or "".
func (s Set) Get(key string) string { return s[key] }

// String renders the set as an equality selector, keys sorted: "app=web,tier=db".
func (s Set) String() string {
	keys := make([]string, 0, len(s))
	for k := range s {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	var b strings.Builder
	for i, k := range keys {
		if i > 0 {
			b.WriteByte(',')
		}
		b.WriteString(k)
		b.WriteByte('=')
		b.WriteString(s[k])
	}
	return b.String()
}

// AsSelector is SelectorFromSet(s).
func (s Set) AsSelector() Selector { return SelectorFromSet(s) }
