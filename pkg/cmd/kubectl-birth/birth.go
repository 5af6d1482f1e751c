package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net/http"
	"strings"
	"time"

	"podline.dev/pkg/telemetry"
)

// birth prints the waterfalls of the Pods the options name.
type birth struct {
	api      *apiClient
	jaeger   string
	jaegerHC *http.Client
	// jaegerErr, when not nil, is why Jaeger cannot be asked at all.
	jaegerErr error
	width     int
	allSpans  bool
	out       io.Writer
}

// show prints one Pod's birth: from its trace when Jaeger holds it, else
// from its Events, saying so.
func (b *birth) show(ctx context.Context, p pod) error {
	key := p.Metadata.Namespace + "/" + p.Metadata.Name
	head := "Birth of pod " + key
	if p.Spec.NodeName != "" {
		head += " on " + p.Spec.NodeName
	}
	traceID, ok := traceIDOf(p.Metadata.Annotations[telemetry.TraceparentAnnotation])
	var why error
	if ok {
		spans, err := b.trace(ctx, traceID)
		if err == nil {
			steps, omitted := stepsFor(spans, stepOptions{Pod: key, AllSpans: b.allSpans})
			steps = append(steps, readyStep(p, steps)...)
			fmt.Fprintf(b.out, "%s (trace %s)\n\n", head, traceID)
			if err := renderWaterfall(b.out, steps, b.width); err != nil {
				return err
			}
			if omitted > 0 {
				fmt.Fprintf(b.out, "(%d later steps of the trace, after the pod was first Ready, left out: --all-spans shows them)\n", omitted)
			}
			_, err = fmt.Fprintf(b.out, "\nTrace: %s/trace/%s\n", strings.TrimRight(b.jaeger, "/"), traceID)
			return err
		}
		if !errors.Is(err, errNoTrace) && !errors.Is(err, errJaegerUnreachable) {
			return err
		}
		why = err
	} else {
		why = fmt.Errorf("%w: the pod has no %s annotation", errNoTrace, telemetry.TraceparentAnnotation)
	}
	events, err := b.api.events(ctx, p.Metadata.Namespace, p.Metadata.Name)
	if err != nil {
		return err
	}
	fmt.Fprintf(b.out, "%s\n(fallback: %v; timeline from the pod's Events)\n\n", head, why)
	steps := eventSteps(events)
	steps = append(steps, readyStep(p, steps)...)
	return renderWaterfall(b.out, steps, b.width)
}

// trace asks Jaeger for the trace of id.
func (b *birth) trace(ctx context.Context, id string) ([]span, error) {
	if b.jaegerErr != nil {
		return nil, b.jaegerErr
	}
	return fetchTrace(ctx, b.jaegerHC, b.jaeger, id)
}

// readyStep is the moment the Pod's Ready condition turned True, if it
// did. The condition keeps whole seconds; the end of the kubelet's
// FirstReadiness span, when the trace has it, is the same moment to the
// microsecond and is used instead.
func readyStep(p pod, steps []step) []step {
	t, ok := p.readySince()
	if !ok {
		return nil
	}
	detail := "condition Ready=True at " + t.Format(time.RFC3339)
	for _, s := range steps {
		if s.Component == "kubelet" && s.Name == "FirstReadiness" {
			return []step{{Component: "pod", Name: "Ready", Detail: detail + ", at the end of the kubelet's FirstReadiness", Start: s.Start.Add(s.Duration), Instant: true}}
		}
	}
	return []step{{Component: "pod", Name: "Ready", Detail: detail + " (the API keeps whole seconds)", Start: t, Instant: true, Coarse: true}}
}

// traceIDOf is the trace id of a W3C traceparent "00-<trace>-<span>-<flags>".
func traceIDOf(tp string) (string, bool) {
	parts := strings.Split(tp, "-")
	if len(parts) != 4 || len(parts[1]) != 32 || strings.Trim(parts[1], "0123456789abcdef") != "" || strings.Trim(parts[1], "0") == "" {
		return "", false
	}
	return parts[1], true
}
