package field

import (
	"strconv"
	"strings"
)

// Path is a field path built from the root down. The zero value is the root.
type Path struct {
	parent *Path
	name   string // field name, or "" for an index or key step
	index  string // "[0]" or "[key]" for index and key steps
}

// NewPath starts a path at the named root field with optional further fields.
func NewPath(name string, more ...string) *Path {
	p := &Path{name: name}
	for _, m := range more {
		p = p.Child(m)
	}
	return p
}

// Child returns the path of a field below p.
func (p *Path) Child(name string, more ...string) *Path {
	c := &Path{parent: p, name: name}
	for _, m := range more {
		c = c.Child(m)
	}
	return c
}

// Index returns the path of element i of the list at p.
func (p *Path) Index(i int) *Path { return &Path{parent: p, index: "[" + strconv.Itoa(i) + "]"} }

// Key returns the path of entry k of the map at p.
func (p *Path) Key(k string) *Path { return &Path{parent: p, index: "[" + k + "]"} }

// String renders the path as Kubernetes does: metadata.labels[app], spec.containers[0].image.
func (p *Path) String() string {
	if p == nil {
		return ""
	}
	var steps []*Path
	for q := p; q != nil; q = q.parent {
		steps = append(steps, q)
	}
	var b strings.Builder
	for i := len(steps) - 1; i >= 0; i-- {
		s := steps[i]
		if s.index != "" {
			b.WriteString(s.index)
			continue
		}
		if b.Len() > 0 {
			b.WriteByte('.')
		}
		b.WriteString(s.name)
	}
	return b.String()
}
