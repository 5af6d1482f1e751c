package volumes

import "podline.dev/services/kubelet/internal/resource"

func quantityBytes(s string) (int64, error) { return resource.Value(s) }
