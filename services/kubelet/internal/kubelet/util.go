package kubelet

import (
	"google.golang.org/protobuf/proto"
)

func protoEqual(a, b proto.Message) bool { return proto.Equal(a, b) }
