// Package grpcdyn builds gRPC method handlers at run time from protobuf
// descriptors, for servers that implement every generated service with
// one generic handler (the apiserver, the watchcache replicas).
package grpcdyn

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"
)

// FindMessage returns the linked-in Go type of a message by full name.
func FindMessage(name string) (protoreflect.MessageType, error) {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		return nil, fmt.Errorf("grpcdyn: message %s: %w", name, err)
	}
	return mt, nil
}

// UnaryFunc serves one unary call.
type UnaryFunc func(ctx context.Context, req proto.Message) (proto.Message, error)

// UnaryHandler is a grpc.MethodDesc handler for fullMethod that decodes
// the request as in and runs call, through the server's interceptors.
func UnaryHandler(fullMethod string, in protoreflect.MessageType, call UnaryFunc) func(any, context.Context, func(any) error, grpc.UnaryServerInterceptor) (any, error) {
	return func(srv any, ctx context.Context, dec func(any) error, ic grpc.UnaryServerInterceptor) (any, error) {
		req := in.New().Interface()
		if err := dec(req); err != nil {
			return nil, err
		}
		if ic == nil {
			return call(ctx, req)
		}
		info := &grpc.UnaryServerInfo{Server: srv, FullMethod: fullMethod}
		return ic(ctx, req, info, func(ctx context.Context, req any) (any, error) {
			return call(ctx, req.(proto.Message))
		})
	}
}
