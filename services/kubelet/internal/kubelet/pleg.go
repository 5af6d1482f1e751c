package kubelet

import (
	"context"
	"sort"
	"strings"
	"time"

	"podline.dev/services/kubelet/internal/runtime"
)

// plegLoop relists the runtime every RelistPeriod and wakes the worker of
// every pod whose containers or sandboxes changed state, as the kubelet's
// pod lifecycle event generator does.
func (kl *Kubelet) plegLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-kl.clock.After(kl.cfg.RelistPeriod):
		}
		if err := kl.relist(ctx); err != nil && ctx.Err() == nil {
			kl.log.Warn("relist runtime", "err", err)
		}
	}
}

// relist compares each pod's runtime state with the previous relist.
func (kl *Kubelet) relist(ctx context.Context) error {
	ctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	sbs, err := kl.runtime.ListPodSandboxes(ctx, "")
	if err != nil {
		return err
	}
	cs, err := kl.runtime.ListContainers(ctx, "")
	if err != nil {
		return err
	}
	parts := map[string][]string{}
	for _, sb := range sbs {
		parts[sb.Pod.UID] = append(parts[sb.Pod.UID], "s:"+sb.ID+"="+string(sb.State))
	}
	for _, c := range cs {
		parts[c.Pod.UID] = append(parts[c.Pod.UID], "c:"+c.ID+"="+string(c.State))
	}
	now := make(map[string]string, len(parts))
	for uid, p := range parts {
		sort.Strings(p)
		now[uid] = strings.Join(p, ",")
	}
	kl.plegMu.Lock()
	prev := kl.pleg
	kl.pleg = now
	kl.runtimePods = runtimePods(sbs, cs)
	kl.relisted = true
	kl.plegMu.Unlock()
	for uid, sig := range now {
		if prev[uid] != sig {
			kl.workers.Trigger(uid)
		}
	}
	for uid := range prev {
		if _, ok := now[uid]; !ok {
			kl.workers.Trigger(uid)
		}
	}
	return nil
}

// lastRelist is what the runtime held at the last relist (ok is false
// before the first).
func (kl *Kubelet) lastRelist() (map[string]runtime.PodRef, bool) {
	kl.plegMu.Lock()
	defer kl.plegMu.Unlock()
	return kl.runtimePods, kl.relisted
}

// runtimePods lists the pods the runtime holds anything of.
func runtimePods(sbs []*runtime.Sandbox, cs []*runtime.Container) map[string]runtime.PodRef {
	out := map[string]runtime.PodRef{}
	for _, sb := range sbs {
		out[sb.Pod.UID] = sb.Pod
	}
	for _, c := range cs {
		out[c.Pod.UID] = c.Pod
	}
	return out
}
