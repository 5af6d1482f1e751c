// Package backoff is the kubelet's per-key exponential backoff, after
// client-go's flowcontrol.Backoff: CrashLoopBackOff between restarts of a
// failing container (10 s doubling to 5 min) and ImagePullBackOff between
// pulls of an image that failed. It is a pure function of its calls and an
// injected clock: the kubelet asks IsInBackOffSince with the time the
// container last finished, and calls Next when it restarts it anyway.
package backoff
