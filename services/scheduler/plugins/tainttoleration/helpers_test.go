package tainttoleration

import (
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
)

func asNode(v any) object.Object {
	if n, ok := v.(*corev1.Node); ok {
		return n
	}
	return nil
}
