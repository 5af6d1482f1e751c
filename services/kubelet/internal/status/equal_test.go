package status

import (
	"google.golang.org/protobuf/proto"

	corev1 "podline.dev/proto/core/v1"
)

func equal(a, b *corev1.PodStatus) bool { return proto.Equal(a, b) }
