package audit

import (
	"fmt"
	"os"
	"slices"
	"strings"

	"sigs.k8s.io/yaml"

	"podline.dev/services/apiserver/internal/authz"
)

// Level is how much of a request is logged.
type Level string

// Levels, from least to most.
const (
	LevelNone            Level = "None"
	LevelMetadata        Level = "Metadata"
	LevelRequest         Level = "Request"
	LevelRequestResponse Level = "RequestResponse"
)

// Stage is a point in a request's life that produces an event.
type Stage string

// Stages, as Kubernetes names them.
const (
	StageRequestReceived  Stage = "RequestReceived"
	StageResponseStarted  Stage = "ResponseStarted"
	StageResponseComplete Stage = "ResponseComplete"
)

// GroupResources selects resources of one API group.
type GroupResources struct {
	Group string `json:"group"`
	// Resources are "pods", "pods/status", "pods/*", "*/status" or "*";
	// empty means every resource of the group.
	Resources     []string `json:"resources,omitempty"`
	ResourceNames []string `json:"resourceNames,omitempty"`
}

// Rule gives a level to the requests it matches; an empty list matches
// everything.
type Rule struct {
	Level           Level            `json:"level"`
	Users           []string         `json:"users,omitempty"`
	UserGroups      []string         `json:"userGroups,omitempty"`
	Verbs           []string         `json:"verbs,omitempty"`
	Resources       []GroupResources `json:"resources,omitempty"`
	Namespaces      []string         `json:"namespaces,omitempty"`
	NonResourceURLs []string         `json:"nonResourceURLs,omitempty"`
	OmitStages      []Stage          `json:"omitStages,omitempty"`
}

// Policy is an audit.k8s.io/v1 Policy.
type Policy struct {
	APIVersion string  `json:"apiVersion,omitempty"`
	Kind       string  `json:"kind,omitempty"`
	Rules      []Rule  `json:"rules"`
	OmitStages []Stage `json:"omitStages,omitempty"`
}

// MetadataPolicy logs every request at Metadata (no policy file given).
func MetadataPolicy() *Policy { return &Policy{Rules: []Rule{{Level: LevelMetadata}}} }

// LoadPolicy reads a policy file (YAML or JSON).
func LoadPolicy(path string) (*Policy, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return ParsePolicy(data)
}

// ParsePolicy parses and checks a policy.
func ParsePolicy(data []byte) (*Policy, error) {
	var p Policy
	if err := yaml.UnmarshalStrict(data, &p); err != nil {
		return nil, fmt.Errorf("audit policy: %w", err)
	}
	if p.Kind != "" && p.Kind != "Policy" {
		return nil, fmt.Errorf("audit policy: kind %q, want Policy", p.Kind)
	}
	for i, r := range p.Rules {
		switch r.Level {
		case LevelNone, LevelMetadata, LevelRequest, LevelRequestResponse:
		default:
			return nil, fmt.Errorf("audit policy: rules[%d].level: %q is not None, Metadata, Request or RequestResponse", i, r.Level)
		}
		if len(r.NonResourceURLs) > 0 && (len(r.Resources) > 0 || len(r.Namespaces) > 0) {
			return nil, fmt.Errorf("audit policy: rules[%d]: nonResourceURLs cannot be combined with resources or namespaces", i)
		}
	}
	return &p, nil
}

// LevelFor returns the level of a request and the stages not to log.
func (p *Policy) LevelFor(a authz.Attributes) (Level, []Stage) {
	for _, r := range p.Rules {
		if r.matches(a) {
			return r.Level, append(slices.Clone(p.OmitStages), r.OmitStages...)
		}
	}
	return LevelNone, nil
}

func (r Rule) matches(a authz.Attributes) bool {
	if len(r.Users) > 0 && (a.User == nil || !slices.Contains(r.Users, a.User.Name)) {
		return false
	}
	if len(r.UserGroups) > 0 && (a.User == nil || !slices.ContainsFunc(r.UserGroups, a.User.InGroup)) {
		return false
	}
	if len(r.Verbs) > 0 && !slices.Contains(r.Verbs, a.Verb) {
		return false
	}
	if !a.ResourceRequest {
		if len(r.Resources) > 0 || len(r.Namespaces) > 0 {
			return false
		}
		return len(r.NonResourceURLs) == 0 || slices.ContainsFunc(r.NonResourceURLs, func(u string) bool {
			return u == a.Path || strings.HasSuffix(u, "*") && strings.HasPrefix(a.Path, strings.TrimSuffix(u, "*"))
		})
	}
	if len(r.NonResourceURLs) > 0 {
		return false
	}
	if len(r.Namespaces) > 0 && !slices.Contains(r.Namespaces, a.Namespace) {
		return false
	}
	return len(r.Resources) == 0 || slices.ContainsFunc(r.Resources, func(g GroupResources) bool { return g.matches(a) })
}

func (g GroupResources) matches(a authz.Attributes) bool {
	if g.Group != a.APIGroup {
		return false
	}
	if len(g.ResourceNames) > 0 && !slices.Contains(g.ResourceNames, a.Name) {
		return false
	}
	if len(g.Resources) == 0 {
		return true
	}
	combined := a.Resource
	if a.Subresource != "" {
		combined += "/" + a.Subresource
	}
	for _, res := range g.Resources {
		switch {
		case res == "*", res == combined:
			return true
		case res == a.Resource+"/*" && a.Subresource != "":
			return true
		case res == "*/"+a.Subresource && a.Subresource != "":
			return true
		}
	}
	return false
}
