// Package probes runs the liveness, readiness and startup probes of
// running containers, as the kubelet's prober does: one worker per
// container and probe kind runs the probe (exec through the runtime,
// httpGet, tcpSocket, grpc) every periodSeconds after initialDelaySeconds,
// and Tracker turns single outcomes into a result only after
// successThreshold successes or failureThreshold failures in a row. The
// results (by container ID) feed the pod status (ready, started) and the
// pod workers (a failed liveness or startup probe restarts the container);
// each change calls back so the pod is synced at once.
//
// Liveness and readiness wait until the startup probe, if any, has
// succeeded; a failed liveness or startup probe holds its worker until the
// container is replaced. Tracker is pure and tested alone; workers read
// time from an injected clock.
package probes
