package admission_test

import (
	"context"
	"errors"
	"slices"
	"testing"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	sdktrace "go.opentelemetry.io/otel/sdk/trace"
	"go.opentelemetry.io/otel/sdk/trace/tracetest"

	"podline.dev/pkg/apierrors"
	"podline.dev/proto/apis"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/admission"
	"podline.dev/services/apiserver/internal/request"
)

type mutator struct {
	name    string
	log     *[]string
	changed bool
	err     error
}

func (m mutator) Name() string { return m.name }
func (m mutator) Admit(_ context.Context, a *admission.Attributes) (bool, error) {
	*m.log = append(*m.log, m.name)
	a.Warn(m.name + " was here")
	return m.changed, m.err
}

type validator struct {
	name string
	log  *[]string
	err  error
}

func (v validator) Name() string { return v.name }
func (v validator) Validate(_ context.Context, a *admission.Attributes) error {
	*v.log = append(*v.log, v.name+":"+a.User.Name)
	return v.err
}

func TestChainOrderSpansAndDenial(t *testing.T) {
	rec := tracetest.NewSpanRecorder()
	otel.SetTracerProvider(sdktrace.NewTracerProvider(sdktrace.WithSpanProcessor(rec)))
	pods, _ := apis.Lookup("", "pods")
	var log []string
	denied := apierrors.NewForbidden(apierrors.GroupResource{Resource: "pods"}, "p", "no")
	c := &admission.Chain{
		Mutating:   []admission.Mutator{mutator{name: "A", log: &log, changed: true}, mutator{name: "B", log: &log}},
		Validating: []admission.Validator{validator{name: "V1", log: &log}, validator{name: "V2", log: &log, err: denied}, validator{name: "V3", log: &log}},
	}
	ctx := request.WithUser(context.Background(), &request.User{Name: "alice"})
	a := &admission.Attributes{Operation: admission.Create, Resource: pods, Name: "p", Object: &corev1.Pod{}}
	err := c.Admit(ctx, a, func(context.Context) error { log = append(log, "schema"); return nil })
	if !errors.Is(err, denied) {
		t.Fatalf("err = %v, want the validator's denial", err)
	}
	if want := []string{"A", "B", "schema", "V1:alice", "V2:alice"}; !slices.Equal(log, want) {
		t.Fatalf("order = %v, want %v", log, want)
	}
	if w := a.Warnings(); len(w) != 2 {
		t.Errorf("warnings = %v, want two", w)
	}
	spans := rec.Ended()
	if len(spans) != 2 {
		t.Fatalf("%d spans, want 2 (mutating, validating)", len(spans))
	}
	attrs := func(i int) map[attribute.Key]attribute.Value {
		m := map[attribute.Key]attribute.Value{}
		for _, kv := range spans[i].Attributes() {
			m[kv.Key] = kv.Value
		}
		return m
	}
	m, v := attrs(0), attrs(1)
	if spans[0].Name() != "admission" || m[admission.AttrPhase].AsString() != "mutating" || !slices.Equal(m[admission.AttrMutated].AsStringSlice(), []string{"A"}) {
		t.Errorf("mutating span %s: %v", spans[0].Name(), m)
	}
	if v[admission.AttrPhase].AsString() != "validating" || v[admission.AttrDenied].AsString() != "V2" || v[admission.AttrReason].AsString() != denied.Error() {
		t.Errorf("validating span: %v", v)
	}
}

func TestSchemaErrorStopsBeforeValidatingPlugins(t *testing.T) {
	pods, _ := apis.Lookup("", "pods")
	var log []string
	c := &admission.Chain{Validating: []admission.Validator{validator{name: "V", log: &log}}}
	bad := errors.New("invalid")
	a := &admission.Attributes{Operation: admission.Create, Resource: pods, Object: &corev1.Pod{}, User: &request.User{}}
	if err := c.Admit(context.Background(), a, func(context.Context) error { return bad }); !errors.Is(err, bad) {
		t.Fatalf("err = %v", err)
	}
	if len(log) != 0 {
		t.Fatalf("validating plugins ran after a schema error: %v", log)
	}
}
