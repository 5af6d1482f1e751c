package runtime

import (
	"context"
	"errors"
	"io"
	"net"
)

// Splice is the copying half of a PortForward: stream's bytes go to conn
// and conn's to stream. When the client has sent everything, conn is
// half-closed so the server in the pod sees EOF and can still answer;
// Splice returns once the server has finished answering (conn's EOF), or
// when ctx ends, and closes both. A read of stream that is still blocked
// then ends when its connection resets the stream.
func Splice(ctx context.Context, stream io.ReadWriteCloser, conn net.Conn) error {
	defer stream.Close()
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	go func() {
		_, _ = io.Copy(conn, stream)
		if hc, ok := conn.(interface{ CloseWrite() error }); ok {
			_ = hc.CloseWrite()
		}
	}()
	_, err := io.Copy(stream, conn)
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if errors.Is(err, net.ErrClosed) {
		return nil
	}
	return err
}
