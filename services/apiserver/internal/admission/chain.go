package admission

import (
	"context"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/services/apiserver/internal/request"
)

var tracer = otel.Tracer("podline.dev/apiserver/admission")

// Span attributes the chain records.
const (
	AttrPhase   = "admission.phase"
	AttrMutated = "admission.mutated"
	AttrDenied  = "admission.denied_by"
	AttrReason  = "admission.denied_reason"
)

// Chain runs mutating plugins, schema validation and validating plugins in
// that order. The zero Chain admits everything after schema validation.
type Chain struct {
	Mutating   []Mutator
	Validating []Validator
}

// Admit runs the chain on a write. schema is the registry's validation of
// the mutated object; it runs between the two phases. The first error
// stops the chain and is returned as is (plugins return API errors). The
// user is taken from ctx when a.User is nil.
func (c *Chain) Admit(ctx context.Context, a *Attributes, schema func(context.Context) error) error {
	if a.User == nil {
		a.User, _ = request.UserFrom(ctx)
	}
	if err := c.mutate(ctx, a); err != nil {
		return err
	}
	if schema != nil {
		if err := schema(ctx); err != nil {
			return err
		}
	}
	if err := c.validate(ctx, a); err != nil {
		return err
	}
	sendWarnings(ctx, a.warnings)
	return nil
}

func (c *Chain) mutate(ctx context.Context, a *Attributes) error {
	if len(c.Mutating) == 0 {
		return nil
	}
	ctx, sp := tracer.Start(ctx, "admission", trace.WithAttributes(attribute.String(AttrPhase, "mutating")))
	defer sp.End()
	var mutated []string
	for _, p := range c.Mutating {
		changed, err := p.Admit(ctx, a)
		if err != nil {
			deny(sp, p.Name(), err)
			return err
		}
		if changed {
			mutated = append(mutated, p.Name())
		}
	}
	if len(mutated) > 0 {
		sp.SetAttributes(attribute.StringSlice(AttrMutated, mutated))
	}
	return nil
}

func (c *Chain) validate(ctx context.Context, a *Attributes) error {
	if len(c.Validating) == 0 {
		return nil
	}
	ctx, sp := tracer.Start(ctx, "admission", trace.WithAttributes(attribute.String(AttrPhase, "validating")))
	defer sp.End()
	for _, p := range c.Validating {
		if err := p.Validate(ctx, a); err != nil {
			deny(sp, p.Name(), err)
			return err
		}
	}
	return nil
}

func deny(sp trace.Span, plugin string, err error) {
	sp.SetAttributes(attribute.String(AttrDenied, plugin), attribute.String(AttrReason, err.Error()))
	sp.SetStatus(codes.Error, err.Error())
}
