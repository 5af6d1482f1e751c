package main

import (
	"slices"
	"strconv"
	"strings"
	"time"
)

// event is the part of a core/v1 Event the fallback timeline reads.
type event struct {
	Metadata struct {
		Name string `json:"name"`
	} `json:"metadata"`
	Reason         string    `json:"reason"`
	Message        string    `json:"message"`
	Type           string    `json:"type"`
	Count          int       `json:"count"`
	FirstTimestamp time.Time `json:"firstTimestamp"`
	LastTimestamp  time.Time `json:"lastTimestamp"`
	EventTime      time.Time `json:"eventTime"`
	Source         struct {
		Component string `json:"component"`
	} `json:"source"`
	ReportingComponent string `json:"reportingComponent"`
}

// eventSteps is the timeline of a Pod's Events: one instant per Event, in
// time order, for when the Pod has no trace.
func eventSteps(events []event) []step {
	out := make([]step, 0, len(events))
	for _, e := range events {
		comp := e.Source.Component
		if comp == "" {
			comp = e.ReportingComponent
		}
		detail := e.Message
		if e.Count > 1 {
			detail += " (×" + strconv.Itoa(e.Count) + ", last " + e.LastTimestamp.UTC().Format(time.RFC3339) + ")"
		}
		if e.Type != "" && e.Type != "Normal" {
			detail = e.Type + ": " + detail
		}
		at, precise := eventTime(e)
		out = append(out, step{Component: comp, Name: e.Reason, Detail: detail, Start: at, Instant: true, Coarse: !precise})
	}
	slices.SortStableFunc(out, func(a, b step) int { return a.Start.Compare(b.Start) })
	return out
}

// eventTime is when e first happened, as precisely as it says: eventTime
// if set; else the name's suffix, which Kubernetes' recorders (podline's
// too) write as the hex nanoseconds of that moment, when it falls within
// firstTimestamp's second; else firstTimestamp, which is whole seconds
// (precise is false).
func eventTime(e event) (at time.Time, precise bool) {
	if !e.EventTime.IsZero() {
		return e.EventTime, true
	}
	if i := strings.LastIndexByte(e.Metadata.Name, '.'); i >= 0 {
		if ns, err := strconv.ParseInt(e.Metadata.Name[i+1:], 16, 64); err == nil {
			t := time.Unix(0, ns).UTC()
			if d := t.Sub(e.FirstTimestamp); d >= 0 && d < time.Second {
				return t, true
			}
		}
	}
	return e.FirstTimestamp, false
}
