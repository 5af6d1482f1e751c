package kubelet

import (
	"context"
	"errors"
	"fmt"
	"time"

	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/object"
	"podline.dev/pkg/telemetry"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/admission"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/fieldpath"
	"podline.dev/services/kubelet/internal/kuberuntime"
	"podline.dev/services/kubelet/internal/podworkers"
	"podline.dev/services/kubelet/internal/status"
)

var (
	_ podworkers.Syncer = (*Kubelet)(nil)
	_ status.APIPods    = (*Kubelet)(nil)
)

func isTerminalPhase(phase string) bool { return phase == "Succeeded" || phase == "Failed" }

// withStatus is the pod with the status the kubelet last computed for it
// (or the apiserver's, after a restart): what transition times and the
// start time are kept from.
func (kl *Kubelet) withStatus(pod *corev1.Pod) *corev1.Pod {
	st, ok := kl.status.PodStatus(pod.GetMetadata().GetUid())
	if !ok {
		if kl.manager.isStatic(pod.GetMetadata().GetUid()) {
			if m := kl.APIPod(pod.GetMetadata().GetUid()); m != nil && m.GetStatus() != nil {
				st = m.GetStatus()
			}
		}
		if st == nil {
			return pod
		}
	}
	p := proto.Clone(pod).(*corev1.Pod)
	p.Status = st
	return p
}

func (kl *Kubelet) env() fieldpath.Env {
	return fieldpath.Env{HostIPs: kl.cfg.NodeIPs, NodeAllocatable: kl.node.Allocatable()}
}

// SyncPod runs a pod as its spec says (podworkers.Syncer).
func (kl *Kubelet) SyncPod(ctx context.Context, t podworkers.UpdateType, pod *corev1.Pod) (bool, time.Duration, error) {
	uid := pod.GetMetadata().GetUid()
	static := kl.manager.isStatic(uid)
	if kl.isRejected(uid) {
		return true, 0, nil
	}
	if !static {
		if _, ok := kl.status.PodStatus(uid); !ok && isTerminalPhase(pod.GetStatus().GetPhase()) {
			return true, 0, nil // finished before this kubelet started
		}
	}
	rs, err := kuberuntime.GetPodStatus(ctx, kl.runtime, uid)
	if err != nil {
		return false, 0, err
	}
	actions := kuberuntime.ComputePodActions(pod, rs, kl.probes)

	// A sync that acts is a span in the pod's trace; one that only
	// confirms what runs (every resync, and a restarted kubelet adopting
	// its pods) is not.
	var span trace.Span
	if !actions.Empty() {
		ctx, span = telemetry.StartFromObject(ctx, pod, kuberuntime.TracerName, "SyncPod",
			trace.WithAttributes(attribute.String("pod", object.Key(pod)), attribute.String("uid", uid), attribute.String("update", t.String())))
		defer span.End()
	}
	fail := func(err error) {
		if span != nil && err != nil {
			span.RecordError(err)
			span.SetStatus(codes.Error, err.Error())
		}
	}

	if t == podworkers.Create || !kl.isAdmitted(uid) {
		if res := kl.admit(ctx, pod, rs); !res.Admit {
			kl.reject(ctx, pod, res)
			return true, 0, nil
		}
	}
	if t == podworkers.Create && span != nil && len(rs.Sandboxes) == 0 {
		// A new pod: ends when it is first Ready (perhaps in this sync).
		kl.startReadinessSpan(ctx, uid)
	}
	if static {
		if err := kl.syncMirror(ctx, pod); errors.Is(err, errNotRegistered) {
			kl.log.Debug("mirror pod", "pod", object.Key(pod), "err", err)
		} else if err != nil {
			kl.log.Warn("mirror pod", "pod", object.Key(pod), "err", err)
		}
	}

	var requeue time.Duration
	var syncErr error
	if !actions.Empty() {
		vols, err := kl.mountVolumes(ctx, pod)
		if err != nil {
			fail(err)
			kl.setStatus(ctx, pod, rs, false)
			return false, 0, err
		}
		if actions.CreateSandbox {
			// Pod starts take turns: on a small node many at once only
			// thrash, and every pod ends up waiting for the slowest.
			select {
			case kl.startSlots <- struct{}{}:
			case <-ctx.Done():
				return false, 0, ctx.Err()
			}
			defer func() { <-kl.startSlots }()
		}
		start := kl.clock.Now()
		res := kl.kr.SyncPod(ctx, kuberuntime.SyncInput{Pod: pod, Status: rs, Actions: &actions, Volumes: vols, Env: kl.env()})
		kl.log.Debug("synced pod", "pod", object.Key(pod), "took", kl.clock.Since(start), "createSandbox", actions.CreateSandbox,
			"start", len(actions.Start), "init", actions.NextInit != nil, "err", res.Err)
		requeue, syncErr = res.RequeueAfter, res.Err
		fail(syncErr)
		if rs, err = kuberuntime.GetPodStatus(ctx, kl.runtime, uid); err != nil {
			return false, requeue, err
		}
	}
	kl.probes.AddPod(kl.withStatus(pod))
	st := kl.setStatus(ctx, pod, rs, false)
	if isReady(st) {
		kl.endReadinessSpan(uid, "")
	} else if isTerminalPhase(st.GetPhase()) {
		kl.endReadinessSpan(uid, "pod finished before it was ready")
	}
	if isTerminalPhase(st.GetPhase()) && !static {
		return true, 0, syncErr
	}
	if isTerminalPhase(st.GetPhase()) && static && !rs.Running() {
		// A static pod that completed stays completed until its file changes.
		return true, 0, syncErr
	}
	return false, requeue, syncErr
}

func isReady(st *corev1.PodStatus) bool {
	for _, c := range st.GetConditions() {
		if c.GetType() == status.Ready {
			return c.GetStatus() == "True"
		}
	}
	return false
}

// setStatus computes the pod's status from the runtime and hands it to
// the status manager.
func (kl *Kubelet) setStatus(ctx context.Context, pod *corev1.Pod, rs *kuberuntime.PodStatus, terminal bool) *corev1.PodStatus {
	uid := pod.GetMetadata().GetUid()
	st := status.Compute(status.Input{
		Pod:        kl.withStatus(pod),
		Sandboxes:  rs.Sandboxes,
		Containers: rs.Containers,
		Waiting:    kl.kr.Reasons.Get(uid),
		Probes:     kl.probes,
		HostIPs:    kl.cfg.NodeIPs,
		Now:        kl.clock.Now(),
		Terminal:   terminal,
	})
	kl.status.SetPodStatus(ctx, pod, kl.manager.isStatic(uid), st)
	return st
}

func (kl *Kubelet) mountVolumes(ctx context.Context, pod *corev1.Pod) (map[string]string, error) {
	vctx, span := kl.tracer.Start(ctx, "MountVolumes")
	defer span.End()
	env := kl.env()
	if sb := kl.statusPodIPs(pod); len(sb) > 0 {
		env.PodIPs = sb
	}
	vols, err := kl.volumes.SetUp(vctx, pod, env)
	if err != nil {
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		kl.recorder.Eventf(pod, "", events.Warning, "FailedMount", "%v", err)
		return nil, err
	}
	span.SetAttributes(attribute.Int("volumes", len(vols)))
	return vols, nil
}

func (kl *Kubelet) statusPodIPs(pod *corev1.Pod) []string {
	st, ok := kl.status.PodStatus(pod.GetMetadata().GetUid())
	if !ok {
		return nil
	}
	var out []string
	for _, ip := range st.GetPodIps() {
		out = append(out, ip.GetIp())
	}
	return out
}

func (kl *Kubelet) isAdmitted(uid string) bool {
	kl.admitMu.Lock()
	defer kl.admitMu.Unlock()
	return kl.admitted[uid] != nil
}

func (kl *Kubelet) isRejected(uid string) bool {
	kl.admitMu.Lock()
	defer kl.admitMu.Unlock()
	return kl.rejected[uid]
}

// admit decides whether the pod may run beside those admitted before it.
// A pod the runtime already runs (the kubelet restarted) is admitted as is.
func (kl *Kubelet) admit(ctx context.Context, pod *corev1.Pod, rs *kuberuntime.PodStatus) admission.Result {
	span := trace.SpanFromContext(ctx) // no span of its own outside a sync's
	if span.SpanContext().IsValid() {
		_, span = kl.tracer.Start(ctx, "Admit")
		defer span.End()
	}
	uid := pod.GetMetadata().GetUid()
	kl.admitMu.Lock()
	defer kl.admitMu.Unlock()
	if kl.admitted[uid] != nil {
		return admission.Admitted
	}
	res := admission.Admitted
	if len(rs.Sandboxes) == 0 && len(rs.Containers) == 0 && pod.GetStatus().GetPhase() != "Running" {
		active := make([]*corev1.Pod, 0, len(kl.admitted))
		for _, p := range kl.admitted {
			active = append(active, p)
		}
		res = admission.Admit(pod, kl.node.Allocatable(), active)
	}
	span.SetAttributes(attribute.Bool("admitted", res.Admit), attribute.String("reason", res.Reason))
	if res.Admit {
		kl.admitted[uid] = pod
	} else {
		kl.rejected[uid] = true
	}
	return res
}

// reject fails a pod the node cannot run.
func (kl *Kubelet) reject(ctx context.Context, pod *corev1.Pod, res admission.Result) {
	kl.recorder.Eventf(pod, "", events.Warning, res.Reason, "%s", res.Message)
	st := proto.Clone(kl.withStatus(pod).GetStatus()).(*corev1.PodStatus)
	if st == nil {
		st = &corev1.PodStatus{}
	}
	st.Phase, st.Reason, st.Message = "Failed", res.Reason, res.Message
	if st.StartTime == nil {
		st.StartTime = &metav1.Time{Seconds: kl.clock.Now().Unix()}
	}
	kl.status.SetPodStatus(ctx, pod, kl.manager.isStatic(pod.GetMetadata().GetUid()), st)
}

func (kl *Kubelet) unadmit(uid string) {
	kl.admitMu.Lock()
	defer kl.admitMu.Unlock()
	delete(kl.admitted, uid)
}

func (kl *Kubelet) startReadinessSpan(ctx context.Context, uid string) {
	kl.readyMu.Lock()
	defer kl.readyMu.Unlock()
	if kl.readySpans[uid] != nil {
		return
	}
	_, span := kl.tracer.Start(ctx, "FirstReadiness")
	kl.readySpans[uid] = span
}

func (kl *Kubelet) endReadinessSpan(uid, abandoned string) {
	kl.readyMu.Lock()
	span := kl.readySpans[uid]
	delete(kl.readySpans, uid)
	kl.readyMu.Unlock()
	if span == nil {
		return
	}
	if abandoned != "" {
		span.SetStatus(codes.Error, abandoned)
	}
	span.End()
}

// SyncTerminatingPod stops the pod's containers (podworkers.Syncer).
func (kl *Kubelet) SyncTerminatingPod(ctx context.Context, pod *corev1.Pod, grace *int64) error {
	uid := pod.GetMetadata().GetUid()
	kl.endReadinessSpan(uid, "pod terminated before it was ready")
	if kl.probes != nil {
		kl.probes.RemovePod(uid)
	}
	rs, err := kuberuntime.GetPodStatus(ctx, kl.runtime, uid)
	if err != nil {
		return err
	}
	if rs.Running() {
		ctx, span := telemetry.StartFromObject(ctx, pod, kuberuntime.TracerName, "KillPod",
			trace.WithAttributes(attribute.String("pod", object.Key(pod))))
		defer span.End()
		if err := kl.kr.KillPod(ctx, pod, rs, grace); err != nil {
			span.RecordError(err)
			return err
		}
		if rs, err = kuberuntime.GetPodStatus(ctx, kl.runtime, uid); err != nil {
			return err
		}
	}
	kl.unadmit(uid)
	if _, inConfig := kl.manager.get(uid); inConfig && !kl.isRejected(uid) && pod.GetSpec() != nil {
		kl.setStatus(ctx, pod, rs, true)
	}
	return nil
}

// SyncTerminatedPod releases the pod's resources and completes a deletion
// (podworkers.Syncer).
func (kl *Kubelet) SyncTerminatedPod(ctx context.Context, pod *corev1.Pod) error {
	uid := pod.GetMetadata().GetUid()
	rs, err := kuberuntime.GetPodStatus(ctx, kl.runtime, uid)
	if err != nil {
		return err
	}
	latest, inConfig := kl.manager.get(uid)
	if inConfig {
		pod = latest
	}
	static := kl.manager.isStatic(uid) || staticPodAnnotated(pod)
	deleting := pod.GetMetadata().GetDeletionTimestamp() != nil
	remove := !inConfig || deleting
	if remove {
		if err := kl.kr.RemovePod(ctx, rs, kl.kr.PodLogDir(pod)); err != nil {
			return err
		}
		if err := kl.volumes.TearDown(uid); err != nil {
			return err
		}
	} else if err := kl.volumes.TearDown(uid); err != nil {
		return err
	}
	if static && !inConfig {
		if err := kl.deleteMirror(ctx, pod); err != nil {
			return err
		}
		kl.status.Forget(uid)
		kl.forgetAdmission(uid)
		return nil
	}
	if deleting && !static && pod.GetSpec() != nil {
		final := status.Compute(status.Input{
			Pod: kl.withStatus(pod), Sandboxes: rs.Sandboxes, Containers: rs.Containers,
			Probes: kl.probes, HostIPs: kl.cfg.NodeIPs, Now: kl.clock.Now(), Terminal: true,
		})
		// The remaining runtime objects are gone now: report what they were.
		if err := kl.status.WriteNow(ctx, pod, final); err != nil {
			return fmt.Errorf("final status: %w", err)
		}
		if err := kl.status.DeletePod(ctx, pod); err != nil {
			return fmt.Errorf("delete pod: %w", err)
		}
		kl.log.Info("pod deleted", "pod", object.Key(pod))
	}
	if !inConfig {
		kl.status.Forget(uid)
		kl.forgetAdmission(uid)
	}
	return nil
}

// forgetAdmission drops what admission remembers of a pod that is gone.
func (kl *Kubelet) forgetAdmission(uid string) {
	kl.admitMu.Lock()
	defer kl.admitMu.Unlock()
	delete(kl.admitted, uid)
	delete(kl.rejected, uid)
}

func staticPodAnnotated(pod *corev1.Pod) bool {
	return pod.GetMetadata().GetAnnotations()["kubernetes.io/config.source"] == "file"
}
