package scheduler

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"

	"podline.dev/services/scheduler/internal/framework"
	"podline.dev/services/scheduler/internal/framework/runtime"
)

// startSpan starts the span of one extension point under the attempt's span.
func startSpan(ctx context.Context, name string) (context.Context, trace.Span) {
	return otel.Tracer(TracerName).Start(ctx, name)
}

// endSpan records a plugin status on the span and ends it.
func endSpan(span trace.Span, st *framework.Status) {
	if span.IsRecording() && !st.IsSuccess() {
		span.SetAttributes(attribute.String("status.code", st.Code().String()), attribute.String("status.plugin", st.Plugin()),
			attribute.String("status.message", st.Message()))
		if st.Code() == framework.Error {
			span.SetStatus(codes.Error, st.Message())
		}
	}
	span.End()
}

// annotateFilter writes the Filter verdicts: counts, the reason histogram,
// and for up to topN rejected nodes which plugin rejected them and why.
func annotateFilter(span trace.Span, topN, total int, feasible []*framework.NodeInfo, rejected framework.NodeToStatus) {
	attrs := []attribute.KeyValue{
		attribute.Int("nodes.total", total),
		attribute.Int("nodes.feasible", len(feasible)),
		attribute.Int("nodes.rejected", len(rejected)),
	}
	if len(rejected) > 0 {
		attrs = append(attrs, attribute.String("filter.reasons", framework.ReasonHistogram(rejected)))
	}
	names := make([]string, 0, len(rejected))
	for n := range rejected {
		names = append(names, n)
	}
	slices.Sort(names)
	for _, n := range names[:min(topN, len(names))] {
		st := rejected[n]
		attrs = append(attrs, attribute.String("filter.node."+n, st.Plugin()+": "+st.Message()))
	}
	for _, ni := range feasible[:min(topN, len(feasible))] {
		attrs = append(attrs, attribute.String("filter.node."+ni.Name(), "passed"))
	}
	span.SetAttributes(attrs...)
}

// annotateScores writes the topN nodes by total score with each plugin's
// weighted score, so the trace shows why the winner won.
func annotateScores(span trace.Span, topN int, scores []runtime.NodePluginScores) {
	idx := make([]int, len(scores))
	for i := range idx {
		idx[i] = i
	}
	slices.SortStableFunc(idx, func(a, b int) int { return int(scores[b].TotalScore - scores[a].TotalScore) })
	attrs := []attribute.KeyValue{attribute.Int("nodes.scored", len(scores))}
	for rank, i := range idx[:min(topN, len(idx))] {
		var b strings.Builder
		fmt.Fprintf(&b, "%s total=%d", scores[i].Name, scores[i].TotalScore)
		for _, ps := range scores[i].Scores {
			fmt.Fprintf(&b, " %s=%d", ps.Name, ps.Score)
		}
		attrs = append(attrs, attribute.String(fmt.Sprintf("score.rank.%02d", rank+1), b.String()))
	}
	span.SetAttributes(attrs...)
}
