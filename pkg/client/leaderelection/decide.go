package leaderelection

import "time"

// Record is what a Lock stores: the fields of a Lease's spec.
type Record struct {
	HolderIdentity       string
	LeaseDurationSeconds int32
	AcquireTime          time.Time
	RenewTime            time.Time
	LeaderTransitions    int32
}

// observation is what a candidate last saw of the record, and when (on its own clock).
type observation struct {
	record Record
	time   time.Time
}

// decide says whether identity may write a record at now given the record
// it just read (cur), and which record to write. It is the whole election
// rule: the holder may always renew; anyone may take a record with no
// holder; a record held by someone else may be taken only once it has not
// changed for its lease duration as this candidate observed it.
func decide(cur Record, seen observation, now time.Time, identity string, leaseDuration time.Duration) (Record, bool) {
	next := Record{
		HolderIdentity:       identity,
		LeaseDurationSeconds: durationSeconds(leaseDuration),
		AcquireTime:          now,
		RenewTime:            now,
	}
	if cur.HolderIdentity == identity {
		next.AcquireTime = cur.AcquireTime
		next.LeaderTransitions = cur.LeaderTransitions
		return next, true
	}
	held := leaseDuration
	if cur.LeaseDurationSeconds > 0 {
		held = time.Duration(cur.LeaseDurationSeconds) * time.Second
	}
	if cur.HolderIdentity != "" && seen.time.Add(held).After(now) {
		return Record{}, false
	}
	next.LeaderTransitions = cur.LeaderTransitions + 1
	return next, true
}

// durationSeconds rounds up, so a sub-second lease in a test is still at least 1 s on the wire.
func durationSeconds(d time.Duration) int32 {
	return int32((d + time.Second - 1) / time.Second)
}

// released is the record a leader writes when it steps down: no holder, so
// the next candidate takes it at once.
func released(cur Record, now time.Time) Record {
	return Record{LeaseDurationSeconds: 1, AcquireTime: now, RenewTime: now, LeaderTransitions: cur.LeaderTransitions}
}
