package probes

// Tracker applies a probe's thresholds: the reported result changes only
// after successThreshold successes or failureThreshold failures in a row.
// It is the pure core of a worker.
type Tracker struct {
	SuccessThreshold int
	FailureThreshold int

	last Result // the previous single outcome
	run  int    // how many of it in a row
}

// Observe records one outcome and returns the result to report and
// whether the thresholds allow reporting it now.
func (t *Tracker) Observe(r Result) (Result, bool) {
	if r == t.last {
		t.run++
	} else {
		t.last, t.run = r, 1
	}
	if r == Failure && t.run < max(t.FailureThreshold, 1) {
		return r, false
	}
	if r == Success && t.run < max(t.SuccessThreshold, 1) {
		return r, false
	}
	return r, true
}

// Reset forgets the run (a new container, or a worker put on hold).
func (t *Tracker) Reset() { t.last, t.run = Unknown, 0 }
