package client

import (
	"context"
	"errors"
	"io"
	"sync"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/metadata"
	"google.golang.org/grpc/status"
	"google.golang.org/protobuf/reflect/protoreflect"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	metav1 "podline.dev/proto/meta/v1"
)

// WatchOpenHeader is the header the server sends once a watch is open.
const WatchOpenHeader = "podline-watch"

// Watch starts a watch. A 410 at the start is returned as the error; an
// error later arrives as an Error event before the channel closes.
func (c *Client[T]) Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error) {
	if opts == nil {
		opts = &metav1.ListRequest{}
	}
	ctx, cancel := context.WithCancel(ctx)
	stream, err := c.conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, c.service+"Watch")
	if err == nil {
		err = stream.SendMsg(opts)
	}
	if err == nil {
		err = stream.CloseSend()
	}
	if err == nil {
		// The server marks its headers once the watch is open; a call that
		// failed at the start has none, and RecvMsg gives its status.
		var md metadata.MD
		md, err = stream.Header()
		if err == nil && len(md.Get(WatchOpenHeader)) == 0 {
			if err = stream.RecvMsg(c.event.New().Interface()); err == nil || errors.Is(err, io.EOF) {
				err = errors.New("watch ended before it started")
			}
		}
	}
	if err != nil {
		cancel()
		return nil, apierrors.FromError(err)
	}
	w := &streamWatch{cancel: cancel, ch: make(chan watch.Event)}
	go w.receive(ctx, stream, c.event)
	return w, nil
}

type streamWatch struct {
	cancel context.CancelFunc
	ch     chan watch.Event
	once   sync.Once
}

func (w *streamWatch) ResultChan() <-chan watch.Event { return w.ch }

func (w *streamWatch) Stop() { w.once.Do(w.cancel) }

func (w *streamWatch) receive(ctx context.Context, stream grpc.ClientStream, mt protoreflect.MessageType) {
	defer close(w.ch)
	defer w.Stop()
	for {
		msg := mt.New()
		err := stream.RecvMsg(msg.Interface())
		if err != nil {
			if errors.Is(err, io.EOF) || ctx.Err() != nil || status.Code(err) == codes.Canceled {
				return
			}
			w.send(ctx, watch.Event{Type: watch.Error, Err: apierrors.FromError(err)})
			return
		}
		fields := msg.Descriptor().Fields()
		ev := watch.Event{Type: watch.EventType(msg.Get(fields.ByName("type")).String())}
		if fd := fields.ByName("object"); msg.Has(fd) {
			ev.Object = msg.Get(fd).Message().Interface().(object.Object)
		}
		if !w.send(ctx, ev) {
			return
		}
	}
}

func (w *streamWatch) send(ctx context.Context, ev watch.Event) bool {
	select {
	case w.ch <- ev:
		return true
	case <-ctx.Done():
		return false
	}
}
