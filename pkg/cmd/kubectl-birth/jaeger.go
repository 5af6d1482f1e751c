package main

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// jaegerTrace is the part of one trace the plugin reads, as Jaeger's query
// API returns it (GET /api/traces/<id>: {"data":[trace]}).
type jaegerTrace struct {
	Spans     []jaegerSpan             `json:"spans"`
	Processes map[string]jaegerProcess `json:"processes"`
}

type jaegerSpan struct {
	SpanID        string      `json:"spanID"`
	OperationName string      `json:"operationName"`
	References    []jaegerRef `json:"references"`
	StartTime     int64       `json:"startTime"` // µs since the epoch
	Duration      int64       `json:"duration"`  // µs
	Tags          []jaegerTag `json:"tags"`
	ProcessID     string      `json:"processID"`
}

type jaegerRef struct {
	RefType string `json:"refType"`
	SpanID  string `json:"spanID"`
}

type jaegerTag struct {
	Key   string `json:"key"`
	Type  string `json:"type"`
	Value any    `json:"value"`
}

type jaegerProcess struct {
	ServiceName string `json:"serviceName"`
}

type jaegerResponse struct {
	Data   []jaegerTrace `json:"data"`
	Errors []struct {
		Code int    `json:"code"`
		Msg  string `json:"msg"`
	} `json:"errors"`
}

// span is one span of a trace, in the form the steps are built from.
type span struct {
	ID, Parent string
	Service    string
	Name       string
	Start      time.Time
	Duration   time.Duration
	Attrs      map[string]string
}

// fetchTrace GETs trace id from the Jaeger query API at base. It returns
// errNoTrace when Jaeger does not hold the trace.
func fetchTrace(ctx context.Context, hc *http.Client, base, id string) ([]span, error) {
	u := strings.TrimRight(base, "/") + "/api/traces/" + url.PathEscape(id)
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return nil, err
	}
	resp, err := hc.Do(req)
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errJaegerUnreachable, err)
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, maxTraceBytes))
	if err != nil {
		return nil, fmt.Errorf("%w: %v", errJaegerUnreachable, err)
	}
	if resp.StatusCode == http.StatusNotFound {
		return nil, fmt.Errorf("%w: %s", errNoTrace, id)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("%w: %s: %s", errJaegerUnreachable, resp.Status, strings.TrimSpace(string(body)))
	}
	return decodeTrace(body)
}

// maxTraceBytes bounds the trace read from Jaeger (a Deployment of many
// replicas is a few thousand spans, far below this).
const maxTraceBytes = 64 << 20

// decodeTrace reads the query API's answer into spans.
func decodeTrace(body []byte) ([]span, error) {
	var r jaegerResponse
	if err := json.Unmarshal(body, &r); err != nil {
		return nil, fmt.Errorf("jaeger answer: %w", err)
	}
	if len(r.Data) == 0 || len(r.Data[0].Spans) == 0 {
		return nil, errNoTrace
	}
	t := r.Data[0]
	out := make([]span, 0, len(t.Spans))
	for _, js := range t.Spans {
		s := span{
			ID:       js.SpanID,
			Service:  t.Processes[js.ProcessID].ServiceName,
			Name:     js.OperationName,
			Start:    time.UnixMicro(js.StartTime).UTC(),
			Duration: time.Duration(js.Duration) * time.Microsecond,
			Attrs:    make(map[string]string, len(js.Tags)),
		}
		for _, ref := range js.References {
			if ref.RefType == "CHILD_OF" || s.Parent == "" {
				s.Parent = ref.SpanID
			}
		}
		for _, tag := range js.Tags {
			s.Attrs[tag.Key] = tagString(tag.Value)
		}
		out = append(out, s)
	}
	return out, nil
}

// tagString prints a tag value: integers without an exponent, arrays as
// comma-separated lists, the rest as Go prints them.
func tagString(v any) string {
	switch x := v.(type) {
	case string:
		// Jaeger stores an OpenTelemetry array attribute as its JSON text.
		var list []any
		if strings.HasPrefix(x, "[") && json.Unmarshal([]byte(x), &list) == nil {
			return tagString(list)
		}
		return x
	case float64:
		if x == float64(int64(x)) {
			return fmt.Sprintf("%d", int64(x))
		}
		return fmt.Sprintf("%g", x)
	case []any:
		parts := make([]string, len(x))
		for i, e := range x {
			parts[i] = tagString(e)
		}
		return strings.Join(parts, ",")
	default:
		return fmt.Sprint(x)
	}
}
