// Package imagelocality prefers nodes that already have the pod's images
// (from Node status.images), weighting each image by its size and by how
// widely it is spread (an image on every node gives no advantage), as
// Kubernetes' ImageLocality does.
package imagelocality

import (
	"context"
	"encoding/json"

	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/scheduler/internal/framework"
)

// Name is the plugin's name in profiles.
const Name = "ImageLocality"

// Kubernetes' thresholds: below 23 MB an image is not worth preferring;
// 1000 MB per container is the most that counts.
const (
	mb                    int64 = 1024 * 1024
	minThreshold                = 23 * mb
	maxContainerThreshold       = 1000 * mb
)

// ImageLocality is the Score plugin.
type ImageLocality struct {
	handle framework.Handle
}

var _ framework.ScorePlugin = (*ImageLocality)(nil)

// New builds the plugin.
func New(_ context.Context, _ json.RawMessage, h framework.Handle) (framework.Plugin, error) {
	return &ImageLocality{handle: h}, nil
}

func (*ImageLocality) Name() string { return Name }

// Score is 0-100 from the sizes of the pod's images present on the node.
func (pl *ImageLocality) Score(_ context.Context, _ *framework.CycleState, pod *corev1.Pod, nodeInfo *framework.NodeInfo) (int64, *framework.Status) {
	total := len(pl.handle.SnapshotSharedLister().NodeInfos().List())
	if total == 0 {
		return 0, nil
	}
	var sum int64
	n := 0
	for _, cs := range [][]*corev1.Container{pod.GetSpec().GetInitContainers(), pod.GetSpec().GetContainers()} {
		for _, c := range cs {
			n++
			if st, ok := nodeInfo.ImageStates[framework.NormalizedImageName(c.GetImage())]; ok {
				sum += int64(float64(st.Size) * float64(st.NumNodes) / float64(total))
			}
		}
	}
	return calculatePriority(sum, n), nil
}

func (*ImageLocality) ScoreExtensions() framework.ScoreExtensions { return nil }

func calculatePriority(sum int64, containers int) int64 {
	maxThreshold := maxContainerThreshold * int64(max(containers, 1))
	sum = min(max(sum, minThreshold), maxThreshold)
	return framework.MaxNodeScore * (sum - minThreshold) / (maxThreshold - minThreshold)
}
