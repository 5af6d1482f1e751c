package runtime

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"

	"podline.dev/services/scheduler/internal/framework"
)

// PluginFactory builds a plugin from its JSON args (nil when none are configured).
type PluginFactory func(ctx context.Context, args json.RawMessage, h framework.Handle) (framework.Plugin, error)

// Registry maps plugin names to factories.
type Registry map[string]PluginFactory

// Register adds a factory; a duplicate name is an error.
func (r Registry) Register(name string, f PluginFactory) error {
	if _, ok := r[name]; ok {
		return fmt.Errorf("a plugin named %v already exists", name)
	}
	r[name] = f
	return nil
}

// DecodeArgs decodes args into out (which holds the defaults), rejecting unknown fields.
func DecodeArgs(args json.RawMessage, out any) error {
	if len(args) == 0 {
		return nil
	}
	dec := json.NewDecoder(bytes.NewReader(args))
	dec.DisallowUnknownFields()
	return dec.Decode(out)
}
