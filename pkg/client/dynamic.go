package client

import (
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
)

// ForResource returns an untyped client of res, for code that treats every
// resource alike (the watchcache replicas list and watch them all). The
// kind's Go type must be linked in (import podline.dev/proto/all).
func ForResource(conn grpc.ClientConnInterface, res apis.Resource) (*Client[object.Object], error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(res.Message()))
	if err != nil {
		return nil, fmt.Errorf("client: %s: %w", res.Message(), err)
	}
	types := make([]protoreflect.MessageType, 3)
	for i, suffix := range []string{"List", "WatchEvent", "WriteRequest"} {
		if types[i], err = protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(res.Message() + suffix)); err != nil {
			return nil, fmt.Errorf("client: %s%s: %w", res.Message(), suffix, err)
		}
	}
	return &Client[object.Object]{
		conn:     conn,
		Resource: res,
		service:  "/" + res.Group.Proto + "." + res.Service() + "/",
		newObj:   func() object.Object { return mt.New().Interface().(object.Object) },
		list:     types[0],
		event:    types[1],
		write:    types[2],
	}, nil
}
