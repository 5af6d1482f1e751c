package main

import (
	"fmt"
	"io"
	"strings"
	"time"
	"unicode/utf8"
)

// Layout of the waterfall's columns.
const (
	minComponentWidth = len("COMPONENT")
	maxStepWidth      = 40
	timeWidth         = 9
	minBarWidth       = 10
	indentPerDepth    = 2
)

// renderWaterfall writes steps as a waterfall width columns wide: component,
// step (indented under its parent), start offset from the first step,
// duration, and a bar on a common time scale. A step's detail follows on
// its own line. It is a pure function of its input.
func renderWaterfall(w io.Writer, steps []step, width int) error {
	if len(steps) == 0 {
		_, err := fmt.Fprintln(w, "(no steps)")
		return err
	}
	t0, end := timeRange(steps)
	total := end.Sub(t0)

	compW, stepW := minComponentWidth, len("STEP")
	for _, s := range steps {
		compW = max(compW, utf8.RuneCountInString(s.Component))
		stepW = max(stepW, min(maxStepWidth, utf8.RuneCountInString(s.Name)+indentPerDepth*s.Depth))
	}
	fixed := compW + 1 + stepW + 1 + timeWidth + 1 + timeWidth + 2
	barW := max(minBarWidth, width-fixed)

	var b strings.Builder
	fmt.Fprintf(&b, "%s %s %s %s  %s\n", pad("COMPONENT", compW), pad("STEP", stepW),
		padLeft("START", timeWidth), padLeft("DURATION", timeWidth), "0"+padLeft(formatDuration(total), barW-1))
	for _, s := range steps {
		name := strings.Repeat(" ", indentPerDepth*s.Depth) + s.Name
		dur := formatDuration(s.Duration)
		if s.Instant {
			dur = "-"
		}
		fmt.Fprintf(&b, "%s %s %s %s  %s\n", pad(s.Component, compW), pad(truncate(name, stepW), stepW),
			padLeft(formatOffset(s.Start.Sub(t0)), timeWidth), padLeft(dur, timeWidth),
			strings.TrimRight(bar(s, t0, total, barW), " "))
		detail := s.Detail
		if utf8.RuneCountInString(name) > stepW {
			detail = strings.TrimSpace(strings.TrimSpace(s.Name) + " " + detail)
		}
		if detail != "" {
			indent := compW + 1 + indentPerDepth*(s.Depth+1)
			line := strings.Repeat(" ", indent) + "↳ " + detail
			fmt.Fprintln(&b, truncate(line, max(width, indent+minBarWidth)))
		}
	}
	_, err := io.WriteString(w, b.String())
	return err
}

// timeRange is the waterfall's time zero and end. Time zero is the start
// of the first interval (span); without spans, of the first instant known
// more precisely than to the second; else of the first instant. A time
// known to the second (a condition's) does not move it. The end is the
// last end of all.
func timeRange(steps []step) (t0, end time.Time) {
	for _, s := range steps {
		if e := s.Start.Add(s.Duration); end.IsZero() || e.After(end) {
			end = e
		}
	}
	for _, sets := range []func(step) bool{
		func(s step) bool { return !s.Instant },
		func(s step) bool { return !s.Coarse },
		func(step) bool { return true },
	} {
		for _, s := range steps {
			if sets(s) && (t0.IsZero() || s.Start.Before(t0)) {
				t0 = s.Start
			}
		}
		if !t0.IsZero() {
			return t0, end
		}
	}
	return t0, end
}

// bar draws s on a scale of barW cells for total: '█' over its interval
// (at least one cell), '◆' at an instant.
func bar(s step, t0 time.Time, total time.Duration, barW int) string {
	cells := []rune(strings.Repeat(" ", barW))
	if total <= 0 {
		total = 1
	}
	cell := func(d time.Duration) int {
		return min(barW-1, max(0, int(int64(barW)*int64(d)/int64(total))))
	}
	from := cell(s.Start.Sub(t0))
	if s.Instant {
		cells[from] = '◆'
		return string(cells)
	}
	to := cell(s.Start.Add(s.Duration).Sub(t0))
	for i := from; i <= max(from, to); i++ {
		cells[i] = '█'
	}
	return string(cells)
}

// formatOffset prints a start offset with its sign.
func formatOffset(d time.Duration) string {
	if d < 0 {
		return formatDuration(d)
	}
	return "+" + formatDuration(d)
}

// formatDuration prints d with about three significant digits.
func formatDuration(d time.Duration) string {
	switch {
	case d < 0:
		return "-" + formatDuration(-d)
	case d < time.Millisecond:
		return fmt.Sprintf("%dµs", d.Microseconds())
	case d < 100*time.Millisecond:
		return fmt.Sprintf("%.1fms", float64(d)/float64(time.Millisecond))
	case d < time.Second:
		return fmt.Sprintf("%dms", d.Milliseconds())
	case d < time.Minute:
		return fmt.Sprintf("%.2fs", d.Seconds())
	default:
		return d.Round(time.Second).String()
	}
}

func pad(s string, w int) string {
	return s + strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s)))
}

func padLeft(s string, w int) string {
	return strings.Repeat(" ", max(0, w-utf8.RuneCountInString(s))) + s
}

// truncate cuts s to w runes, ending in '…' when it cut.
func truncate(s string, w int) string {
	if utf8.RuneCountInString(s) <= w {
		return s
	}
	r := []rune(s)
	return string(r[:w-1]) + "…"
}
