package printers

import (
	"fmt"
	"time"

	metav1 "podline.dev/proto/meta/v1"
)

// humanDuration writes a duration the way kubectl's AGE column does: exact
// seconds up to two minutes, then coarser units with at most two parts
// ("5m3s", "3h12m", "2d4h", "1y23d").
func humanDuration(d time.Duration) string {
	seconds := int64(d / time.Second)
	switch {
	case seconds < -1:
		// Clocks may disagree by a second; more than that is an error.
		return "<invalid>"
	case seconds < 0:
		return "0s"
	case seconds < 120:
		return fmt.Sprintf("%ds", seconds)
	}
	minutes := int64(d / time.Minute)
	switch {
	case minutes < 10:
		return twoUnits(minutes, "m", seconds%60, "s")
	case minutes < 3*60:
		return fmt.Sprintf("%dm", minutes)
	}
	hours := int64(d / time.Hour)
	switch {
	case hours < 8:
		return twoUnits(hours, "h", minutes%60, "m")
	case hours < 48:
		return fmt.Sprintf("%dh", hours)
	case hours < 8*24:
		return twoUnits(hours/24, "d", hours%24, "h")
	case hours < 2*365*24:
		return fmt.Sprintf("%dd", hours/24)
	case hours < 8*365*24:
		days := hours / 24
		return twoUnits(days/365, "y", days%365, "d")
	}
	return fmt.Sprintf("%dy", hours/24/365)
}

// twoUnits writes "<a><ua><b><ub>", leaving out a zero second part.
func twoUnits(a int64, ua string, b int64, ub string) string {
	if b == 0 {
		return fmt.Sprintf("%d%s", a, ua)
	}
	return fmt.Sprintf("%d%s%d%s", a, ua, b, ub)
}

// since is the age of t at now, "<unknown>" for an unset time.
func since(t *metav1.Time, now time.Time) string {
	if t == nil || t.GetSeconds() == 0 {
		return "<unknown>"
	}
	return humanDuration(now.Sub(time.Unix(t.GetSeconds(), 0)))
}

// sinceMicro is since for a MicroTime.
func sinceMicro(t *metav1.MicroTime, now time.Time) string {
	if t == nil || (t.GetSeconds() == 0 && t.GetNanos() == 0) {
		return "<unknown>"
	}
	return humanDuration(now.Sub(time.Unix(t.GetSeconds(), int64(t.GetNanos()))))
}
