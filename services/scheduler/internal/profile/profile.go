package profile

import (
	"bytes"
	"encoding/json"
	"fmt"
	"os"
	"slices"

	"sigs.k8s.io/yaml"
)

// DefaultSchedulerName is the profile pods get when spec.schedulerName is empty.
const DefaultSchedulerName = "default-scheduler"

// The API version and kind of the file.
const (
	APIVersion = "kubescheduler.config.k8s.io/v1"
	Kind       = "KubeSchedulerConfiguration"
)

// Config is the whole file.
type Config struct {
	APIVersion string `json:"apiVersion,omitempty"`
	Kind       string `json:"kind,omitempty"`
	// PercentageOfNodesToScore bounds how many feasible nodes are looked
	// for; 0 or unset uses Kubernetes' adaptive formula.
	PercentageOfNodesToScore *int32 `json:"percentageOfNodesToScore,omitempty"`
	// PodInitialBackoffSeconds and PodMaxBackoffSeconds bound the retry
	// backoff of unschedulable pods (Kubernetes: 1 s and 10 s).
	PodInitialBackoffSeconds *int64 `json:"podInitialBackoffSeconds,omitempty"`
	PodMaxBackoffSeconds     *int64 `json:"podMaxBackoffSeconds,omitempty"`
	// Parallelism is how many goroutines Filter and Score use (0 or unset:
	// GOMAXPROCS; Kubernetes defaults to 16 on bigger machines).
	Parallelism *int32    `json:"parallelism,omitempty"`
	Profiles    []Profile `json:"profiles,omitempty"`
}

// Profile is one scheduler name's plugins.
type Profile struct {
	SchedulerName            string         `json:"schedulerName,omitempty"`
	PercentageOfNodesToScore *int32         `json:"percentageOfNodesToScore,omitempty"`
	Plugins                  *Plugins       `json:"plugins,omitempty"`
	PluginConfig             []PluginConfig `json:"pluginConfig,omitempty"`
}

// Plugins lists the plugins of each extension point.
type Plugins struct {
	PreEnqueue PluginSet `json:"preEnqueue,omitempty"`
	QueueSort  PluginSet `json:"queueSort,omitempty"`
	PreFilter  PluginSet `json:"preFilter,omitempty"`
	Filter     PluginSet `json:"filter,omitempty"`
	PostFilter PluginSet `json:"postFilter,omitempty"`
	PreScore   PluginSet `json:"preScore,omitempty"`
	Score      PluginSet `json:"score,omitempty"`
	Reserve    PluginSet `json:"reserve,omitempty"`
	Permit     PluginSet `json:"permit,omitempty"`
	PreBind    PluginSet `json:"preBind,omitempty"`
	Bind       PluginSet `json:"bind,omitempty"`
	PostBind   PluginSet `json:"postBind,omitempty"`
	// MultiPoint enables a plugin at every extension point it implements.
	MultiPoint PluginSet `json:"multiPoint,omitempty"`
}

// PluginSet enables and disables plugins; Disabled [{name: "*"}] drops the defaults.
type PluginSet struct {
	Enabled  []Plugin `json:"enabled,omitempty"`
	Disabled []Plugin `json:"disabled,omitempty"`
}

// Plugin names a plugin; Weight is its score weight (0: 1).
type Plugin struct {
	Name   string `json:"name"`
	Weight int32  `json:"weight,omitempty"`
}

// PluginConfig carries one plugin's args as JSON.
type PluginConfig struct {
	Name string          `json:"name"`
	Args json.RawMessage `json:"args,omitempty"`
}

// Args returns the args configured for a plugin, or nil.
func (p *Profile) Args(name string) json.RawMessage {
	for _, c := range p.PluginConfig {
		if c.Name == name {
			return c.Args
		}
	}
	return nil
}

// DefaultPlugins is Kubernetes' default multiPoint set, limited to the
// plugins podline has (no volume plugins), with Kubernetes' weights.
func DefaultPlugins() []Plugin {
	return []Plugin{
		{Name: "SchedulingGates"},
		{Name: "PrioritySort"},
		{Name: "NodeUnschedulable"},
		{Name: "NodeName"},
		{Name: "TaintToleration", Weight: 3},
		{Name: "NodeAffinity", Weight: 2},
		{Name: "NodePorts"},
		{Name: "NodeResourcesFit", Weight: 1},
		{Name: "PodTopologySpread", Weight: 2},
		{Name: "InterPodAffinity", Weight: 2},
		{Name: "DefaultPreemption"},
		{Name: "NodeResourcesBalancedAllocation", Weight: 1},
		{Name: "ImageLocality", Weight: 1},
		{Name: "DefaultBinder"},
	}
}

// Default is the configuration without a file.
func Default() *Config {
	c := &Config{}
	if err := c.complete(); err != nil {
		panic(err)
	}
	return c
}

// Load reads a YAML or JSON configuration file; unknown fields are errors.
func Load(path string) (*Config, error) {
	data, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	return Parse(data)
}

// Parse reads a YAML or JSON configuration; unknown fields are errors.
func Parse(data []byte) (*Config, error) {
	js, err := yaml.YAMLToJSON(data)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	dec := json.NewDecoder(bytes.NewReader(js))
	dec.DisallowUnknownFields()
	c := &Config{}
	if err := dec.Decode(c); err != nil {
		return nil, fmt.Errorf("%w: %v", ErrInvalid, err)
	}
	if err := c.complete(); err != nil {
		return nil, err
	}
	return c, nil
}

func (c *Config) complete() error {
	if c.APIVersion != "" && c.APIVersion != APIVersion {
		return fmt.Errorf("%w: apiVersion %q, want %q", ErrInvalid, c.APIVersion, APIVersion)
	}
	if c.Kind != "" && c.Kind != Kind {
		return fmt.Errorf("%w: kind %q, want %q", ErrInvalid, c.Kind, Kind)
	}
	if c.PodInitialBackoffSeconds == nil {
		c.PodInitialBackoffSeconds = ptr(int64(1))
	}
	if c.PodMaxBackoffSeconds == nil {
		c.PodMaxBackoffSeconds = ptr(int64(10))
	}
	if *c.PodInitialBackoffSeconds <= 0 || *c.PodMaxBackoffSeconds < *c.PodInitialBackoffSeconds {
		return fmt.Errorf("%w: podInitialBackoffSeconds must be positive and at most podMaxBackoffSeconds", ErrInvalid)
	}
	if p := c.Parallelism; p != nil && *p < 0 {
		return fmt.Errorf("%w: parallelism %d is negative", ErrInvalid, *p)
	}
	if p := c.PercentageOfNodesToScore; p != nil && (*p < 0 || *p > 100) {
		return fmt.Errorf("%w: percentageOfNodesToScore %d is not in [0, 100]", ErrInvalid, *p)
	}
	if len(c.Profiles) == 0 {
		c.Profiles = []Profile{{}}
	}
	seen := map[string]bool{}
	for i := range c.Profiles {
		p := &c.Profiles[i]
		if p.SchedulerName == "" {
			p.SchedulerName = DefaultSchedulerName
		}
		if seen[p.SchedulerName] {
			return fmt.Errorf("%w: duplicate profile %q", ErrInvalid, p.SchedulerName)
		}
		seen[p.SchedulerName] = true
		if p.PercentageOfNodesToScore == nil {
			p.PercentageOfNodesToScore = c.PercentageOfNodesToScore
		}
		if p.Plugins == nil {
			p.Plugins = &Plugins{}
		}
		p.Plugins.MultiPoint.Enabled = merge(DefaultPlugins(), p.Plugins.MultiPoint)
		p.Plugins.MultiPoint.Disabled = nil
	}
	return nil
}

// merge applies a user's set to the defaults: "*" disabled drops them all,
// a named one drops that one; enabled ones are added (or re-weighted).
func merge(defaults []Plugin, user PluginSet) []Plugin {
	var out []Plugin
	if !Disables(user, "*") {
		for _, d := range defaults {
			if !Disables(user, d.Name) {
				out = append(out, d)
			}
		}
	}
	for _, e := range user.Enabled {
		if i := slices.IndexFunc(out, func(p Plugin) bool { return p.Name == e.Name }); i >= 0 {
			out[i] = e
			continue
		}
		out = append(out, e)
	}
	return out
}

// Disables reports whether set disables name (or "*").
func Disables(set PluginSet, name string) bool {
	for _, d := range set.Disabled {
		if d.Name == name || d.Name == "*" {
			return true
		}
	}
	return false
}

func ptr[T any](v T) *T { return &v }
