package kuberuntime

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/distribution/reference"
	"go.opentelemetry.io/otel/attribute"
	"go.opentelemetry.io/otel/codes"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/runtime"
)

// waitErr is a container that cannot start yet, with the waiting reason
// its status shows and when to try again.
type waitErr struct {
	reason, message string
	retry           time.Duration
}

func (e *waitErr) Error() string { return e.reason + ": " + e.message }

// PullPolicy is a container's imagePullPolicy, defaulted as Kubernetes
// does: Always for :latest or no tag, IfNotPresent otherwise.
func PullPolicy(c *corev1.Container) string {
	if p := c.GetImagePullPolicy(); p != "" {
		return p
	}
	named, err := reference.ParseNormalizedNamed(c.GetImage())
	if err != nil {
		return "IfNotPresent"
	}
	if _, digested := named.(reference.Digested); digested {
		return "IfNotPresent"
	}
	if tagged, ok := named.(reference.Tagged); !ok || tagged.Tag() == "latest" {
		return "Always"
	}
	return "IfNotPresent"
}

// ensureImage makes the container's image present per its pull policy.
func (m *Manager) ensureImage(ctx context.Context, pod *corev1.Pod, c *corev1.Container, init bool) error {
	ref := events.ContainerPath(c.GetName(), init)
	image := c.GetImage()
	ctx, span := m.tracer.Start(ctx, "PullImage")
	defer span.End()
	span.SetAttributes(attribute.String("image", image), attribute.String("container", c.GetName()))
	if _, err := reference.ParseNormalizedNamed(image); err != nil || image == "" {
		msg := fmt.Sprintf("Failed to apply default image tag %q: couldn't parse image name %q: %v", image, image, err)
		m.recorder.Eventf(pod, ref, events.Warning, "InspectFailed", "%s", msg)
		return &waitErr{reason: ReasonInvalidImageName, message: msg}
	}
	policy := PullPolicy(c)
	_, statErr := m.runtime.ImageStatus(ctx, image)
	present := statErr == nil
	if statErr != nil && !errors.Is(statErr, runtime.ErrNotFound) {
		return &waitErr{reason: ReasonErrImagePull, message: statErr.Error()}
	}
	switch {
	case policy == "Never" && !present:
		msg := fmt.Sprintf("Container image %q is not present with pull policy of Never", image)
		m.recorder.Eventf(pod, ref, events.Warning, ReasonErrImageNeverPull, "%s", msg)
		return &waitErr{reason: ReasonErrImageNeverPull, message: msg}
	case present && policy != "Always":
		span.SetAttributes(attribute.Bool("present", true))
		m.recorder.Eventf(pod, ref, events.Normal, "Pulled", "Container image %q already present on machine", image)
		return nil
	}
	key := pod.GetMetadata().GetUid() + "_" + image
	if m.imageBackoff.IsInBackOffSinceUpdate(key, m.clock.Now()) {
		msg := fmt.Sprintf("Back-off pulling image %q", image)
		m.recorder.Eventf(pod, ref, events.Normal, "BackOff", "%s", msg)
		m.recorder.Eventf(pod, ref, events.Warning, "Failed", "Error: %s", ReasonImagePullBackOff)
		return &waitErr{reason: ReasonImagePullBackOff, message: msg, retry: m.imageBackoff.RemainingSinceUpdate(key)}
	}
	m.recorder.Eventf(pod, ref, events.Normal, "Pulling", "Pulling image %q", image)
	start := m.clock.Now()
	_, err := m.runtime.PullImage(ctx, image)
	if err != nil {
		m.imageBackoff.Next(key, m.clock.Now())
		span.RecordError(err)
		span.SetStatus(codes.Error, err.Error())
		m.recorder.Eventf(pod, ref, events.Warning, "Failed", "Failed to pull image %q: %v", image, err)
		m.recorder.Eventf(pod, ref, events.Warning, "Failed", "Error: %s", ReasonErrImagePull)
		return &waitErr{reason: ReasonErrImagePull, message: fmt.Sprintf("failed to pull image %q: %v", image, err), retry: m.imageBackoff.Get(key)}
	}
	took := m.clock.Since(start)
	size := ""
	if img, err := m.runtime.ImageStatus(ctx, image); err == nil && img.Size > 0 {
		size = fmt.Sprintf(" Image size: %d bytes.", img.Size)
	}
	m.recorder.Eventf(pod, ref, events.Normal, "Pulled", "Successfully pulled image %q in %s (%s including waiting).%s", image, round(took), round(took), size)
	return nil
}

func round(d time.Duration) string {
	return strings.TrimSuffix(d.Round(time.Millisecond).String(), "0s")
}
