package client

import (
	"context"
	"fmt"

	"google.golang.org/grpc"
	"google.golang.org/protobuf/proto"
	"google.golang.org/protobuf/reflect/protoreflect"
	"google.golang.org/protobuf/reflect/protoregistry"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/proto/apis"
	metav1 "podline.dev/proto/meta/v1"
)

// Client reads and writes one kind.
type Client[T object.Object] struct {
	conn     grpc.ClientConnInterface
	Resource apis.Resource
	service  string
	newObj   func() T
	list     protoreflect.MessageType
	event    protoreflect.MessageType
	write    protoreflect.MessageType
}

// For returns the client of T's kind over conn. It panics if T is not a
// kind in the resource table, which is a programming error.
func For[T object.Object](conn grpc.ClientConnInterface) *Client[T] {
	var zero T
	desc := zero.ProtoReflect().Descriptor()
	res, ok := apis.ByMessage(string(desc.FullName()))
	if !ok {
		panic(fmt.Sprintf("client: %s is not an API kind", desc.FullName()))
	}
	mt := zero.ProtoReflect().Type()
	return &Client[T]{
		conn:     conn,
		Resource: res,
		service:  "/" + res.Group.Proto + "." + res.Service() + "/",
		newObj:   func() T { return mt.New().Interface().(T) },
		list:     mustType(res.Group.Proto + "." + res.Kind + "List"),
		event:    mustType(res.Group.Proto + "." + res.Kind + "WatchEvent"),
		write:    mustType(res.Group.Proto + "." + res.Kind + "WriteRequest"),
	}
}

func mustType(name string) protoreflect.MessageType {
	mt, err := protoregistry.GlobalTypes.FindMessageByName(protoreflect.FullName(name))
	if err != nil {
		panic(fmt.Sprintf("client: %s: %v", name, err))
	}
	return mt
}

func (c *Client[T]) invoke(ctx context.Context, method string, req, resp proto.Message, opts ...grpc.CallOption) error {
	if err := c.conn.Invoke(ctx, c.service+method, req, resp, opts...); err != nil {
		return apierrors.FromError(err)
	}
	return nil
}

// MaxListBytes bounds the size of one List answer.
const MaxListBytes = 1 << 30

// Get reads one object.
func (c *Client[T]) Get(ctx context.Context, namespace, name string) (T, error) {
	out := c.newObj()
	err := c.invoke(ctx, "Get", &metav1.GetRequest{Namespace: namespace, Name: name}, out)
	return out, err
}

// List reads a collection; opts.Namespace "" lists all namespaces.
func (c *Client[T]) List(ctx context.Context, opts *metav1.ListRequest) ([]T, *metav1.ListMeta, error) {
	if opts == nil {
		opts = &metav1.ListRequest{}
	}
	l := c.list.New()
	// A list is one message; a large collection is far over gRPC's 4 MiB default.
	if err := c.invoke(ctx, "List", opts, l.Interface(), grpc.MaxCallRecvMsgSize(MaxListBytes)); err != nil {
		return nil, nil, err
	}
	fields := l.Descriptor().Fields()
	items := l.Get(fields.ByName("items")).List()
	out := make([]T, items.Len())
	for i := range out {
		out[i] = items.Get(i).Message().Interface().(T)
	}
	lm, _ := l.Get(fields.ByName("metadata")).Message().Interface().(*metav1.ListMeta)
	return out, lm, nil
}

func (c *Client[T]) writeRequest(obj T, dryRun bool) proto.Message {
	req := c.write.New()
	fields := req.Descriptor().Fields()
	md := obj.GetMetadata()
	req.Set(fields.ByName("namespace"), protoreflect.ValueOfString(md.GetNamespace()))
	req.Set(fields.ByName("name"), protoreflect.ValueOfString(md.GetName()))
	req.Set(fields.ByName("object"), protoreflect.ValueOfMessage(obj.ProtoReflect()))
	if dryRun {
		req.Mutable(fields.ByName("dry_run")).List().Append(protoreflect.ValueOfString("All"))
	}
	return req.Interface()
}

// Create stores a new object (its namespace is metadata.namespace).
func (c *Client[T]) Create(ctx context.Context, obj T) (T, error) {
	out := c.newObj()
	err := c.invoke(ctx, "Create", c.writeRequest(obj, false), out)
	return out, err
}

// Update replaces an object; its resourceVersion, when set, must be current.
func (c *Client[T]) Update(ctx context.Context, obj T) (T, error) {
	out := c.newObj()
	err := c.invoke(ctx, "Update", c.writeRequest(obj, false), out)
	return out, err
}

// UpdateStatus replaces an object's status.
func (c *Client[T]) UpdateStatus(ctx context.Context, obj T) (T, error) {
	out := c.newObj()
	err := c.invoke(ctx, "UpdateStatus", c.writeRequest(obj, false), out)
	return out, err
}

// Delete deletes an object and returns its last state (or its state marked
// for deletion, when finalizers or a grace period hold it).
func (c *Client[T]) Delete(ctx context.Context, namespace, name string, opts *metav1.DeleteOptions) (T, error) {
	out := c.newObj()
	err := c.invoke(ctx, "Delete", &metav1.DeleteRequest{Namespace: namespace, Name: name, Options: opts}, out)
	return out, err
}

// Do calls a subresource method (pods: "Bind") with a body of its own kind.
func Do(ctx context.Context, conn grpc.ClientConnInterface, res apis.Resource, method string, req proto.Message) (*metav1.Status, error) {
	out := &metav1.Status{}
	if err := conn.Invoke(ctx, "/"+res.Group.Proto+"."+res.Service()+"/"+method, req, out); err != nil {
		return nil, apierrors.FromError(err)
	}
	return out, nil
}
