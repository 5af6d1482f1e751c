// Package crilog writes container output in the CRI log format that the
// kubelet, `kubectl logs` and `crictl logs` read:
//
//	2006-01-02T15:04:05.999999999Z07:00 stdout F line
//
// one record per line of output, tagged with the stream and F (full) or
// P (partial: a line longer than the writer's buffer, continued in the
// next record). A Writer splits a stream into records; a File is the log
// file both streams of a container share, reopened on ReopenContainerLog
// after the kubelet rotated it.
package crilog
