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

	"podline.dev/proto/apis"
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

// ServiceDesc is the grpc.ServiceDesc of res's generated service
// (<group proto package>.<service>), found in the linked-in descriptors:
// each server-streaming method is served by stream, given the method's
// request type, and each unary one by unary(method name), with its request
// decoded as that method's input.
func ServiceDesc(res apis.Resource, unary func(method string) (UnaryFunc, error), stream func(in protoreflect.MessageType) grpc.StreamHandler) (*grpc.ServiceDesc, error) {
	name := protoreflect.FullName(res.Group.Proto + "." + res.Service())
	d, err := protoregistry.GlobalFiles.FindDescriptorByName(name)
	if err != nil {
		return nil, fmt.Errorf("grpcdyn: service %s: %w", name, err)
	}
	sd, ok := d.(protoreflect.ServiceDescriptor)
	if !ok {
		return nil, fmt.Errorf("grpcdyn: %s is not a service", name)
	}
	desc := &grpc.ServiceDesc{ServiceName: string(name), HandlerType: (*any)(nil), Metadata: sd.ParentFile().Path()}
	methods := sd.Methods()
	for i := 0; i < methods.Len(); i++ {
		m := methods.Get(i)
		in, err := FindMessage(string(m.Input().FullName()))
		if err != nil {
			return nil, err
		}
		if m.IsStreamingServer() {
			desc.Streams = append(desc.Streams, grpc.StreamDesc{StreamName: string(m.Name()), ServerStreams: true, Handler: stream(in)})
			continue
		}
		call, err := unary(string(m.Name()))
		if err != nil {
			return nil, fmt.Errorf("grpcdyn: %s: %w", name, err)
		}
		desc.Methods = append(desc.Methods, grpc.MethodDesc{
			MethodName: string(m.Name()),
			Handler:    UnaryHandler("/"+string(name)+"/"+string(m.Name()), in, call),
		})
	}
	return desc, nil
}
