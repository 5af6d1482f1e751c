package cri

import (
	"context"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"sync"

	"github.com/gorilla/websocket"
	criv1 "k8s.io/cri-api/pkg/apis/runtime/v1"

	"podline.dev/services/kubelet/internal/runtime"
)

// Channels and subprotocols of the streaming server's WebSocket
// protocols (Kubernetes' channel.k8s.io).
const (
	chStdin  = 0
	chStdout = 1
	chStderr = 2
	chError  = 3
	chResize = 4
	chClose  = 255 // v5: the client closed a stream

	protoV5 = "v5.channel.k8s.io"
	protoV4 = "v4.channel.k8s.io"
)

// streamDialer opens a WebSocket to a streaming URL.
type streamDialer func(ctx context.Context, rawURL string, protocols []string) (*websocket.Conn, error)

func defaultStreamDialer(ctx context.Context, rawURL string, protocols []string) (*websocket.Conn, error) {
	return dialStream(ctx, rawURL, protocols, nil)
}

// dialStream opens a WebSocket to rawURL (http: ws, https: wss) through
// dial (nil: the default dialer).
func dialStream(ctx context.Context, rawURL string, protocols []string, dial func(ctx context.Context, network, addr string) (net.Conn, error)) (*websocket.Conn, error) {
	u, err := url.Parse(rawURL)
	if err != nil {
		return nil, err
	}
	switch u.Scheme {
	case "http":
		u.Scheme = "ws"
	case "https":
		u.Scheme = "wss"
	}
	d := websocket.Dialer{Subprotocols: protocols, ReadBufferSize: 32 << 10, WriteBufferSize: 32 << 10, NetDialContext: dial}
	conn, resp, err := d.DialContext(ctx, u.String(), http.Header{})
	if err != nil {
		if resp != nil {
			b, _ := io.ReadAll(io.LimitReader(resp.Body, 1024))
			resp.Body.Close()
			return nil, fmt.Errorf("%w: %s: %s %s", ErrStream, rawURL, resp.Status, strings.TrimSpace(string(b)))
		}
		return nil, err
	}
	return conn, nil
}

// wsConn serializes writes to a WebSocket.
type wsConn struct {
	mu   sync.Mutex
	conn *websocket.Conn
}

func (c *wsConn) send(ch byte, p []byte) error {
	msg := make([]byte, len(p)+1)
	msg[0] = ch
	copy(msg[1:], p)
	c.mu.Lock()
	defer c.mu.Unlock()
	return c.conn.WriteMessage(websocket.BinaryMessage, msg)
}

// Exec asks the runtime for an exec session (CRI Exec returns the URL of
// its streaming server) and pipes opts' streams through it.
func (r *Runtime) Exec(ctx context.Context, id string, opts runtime.ExecOptions) (int, error) {
	resp, err := r.rt.Exec(ctx, &criv1.ExecRequest{
		ContainerId: id, Cmd: opts.Cmd, Tty: opts.TTY,
		Stdin: opts.Stdin != nil, Stdout: true, Stderr: !opts.TTY,
	})
	if err != nil {
		return 0, wrap(err, "exec in "+id)
	}
	conn, err := r.dialer(ctx, resp.GetUrl(), []string{protoV5, protoV4})
	if err != nil {
		return 0, fmt.Errorf("exec in %s: %w", id, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	ws := &wsConn{conn: conn}
	v5 := conn.Subprotocol() == protoV5

	if opts.Stdin != nil {
		go func() {
			buf := make([]byte, 32<<10)
			for {
				n, err := opts.Stdin.Read(buf)
				if n > 0 && ws.send(chStdin, buf[:n]) != nil {
					return
				}
				if err != nil {
					if v5 {
						_ = ws.send(chClose, []byte{chStdin})
					}
					return
				}
			}
		}()
	}
	if opts.Resize != nil {
		go func() {
			for sz := range opts.Resize {
				b, _ := json.Marshal(struct{ Width, Height uint16 }{sz.Width, sz.Height})
				if ws.send(chResize, b) != nil {
					return
				}
			}
		}()
	}
	var status []byte
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			if ctx.Err() != nil {
				return 0, ctx.Err()
			}
			if websocket.IsCloseError(err, websocket.CloseNormalClosure) || errors.Is(err, io.EOF) || status != nil {
				break
			}
			return 0, fmt.Errorf("exec in %s: %w", id, err)
		}
		if len(msg) < 2 {
			continue // a channel's opening frame
		}
		switch msg[0] {
		case chStdout:
			if opts.Stdout != nil {
				_, _ = opts.Stdout.Write(msg[1:])
			}
		case chStderr:
			if opts.Stderr != nil {
				_, _ = opts.Stderr.Write(msg[1:])
			}
		case chError:
			status = append(status, msg[1:]...)
		}
	}
	return exitCode(status)
}

// execStatus is the Status the streaming server writes on the error
// channel when the command ends.
type execStatus struct {
	Status  string `json:"status"`
	Message string `json:"message"`
	Reason  string `json:"reason"`
	Details struct {
		Causes []struct {
			Reason  string `json:"reason"`
			Message string `json:"message"`
		} `json:"causes"`
	} `json:"details"`
}

// exitCode reads the command's exit code from the error channel's Status.
func exitCode(b []byte) (int, error) {
	if len(b) == 0 {
		return 0, nil
	}
	var st execStatus
	if err := json.Unmarshal(b, &st); err != nil {
		return 0, fmt.Errorf("%w: error stream: %s", ErrStream, b) // a v1-style plain message
	}
	if st.Status == "Success" {
		return 0, nil
	}
	if st.Reason == "NonZeroExitCode" {
		for _, c := range st.Details.Causes {
			if c.Reason == "ExitCode" {
				if n, err := strconv.Atoi(c.Message); err == nil {
					return n, nil
				}
			}
		}
	}
	return 0, errors.New(st.Message)
}

// PortForward asks the runtime for a port-forward session of the sandbox
// (CRI PortForward returns its streaming server's URL) and copies between
// stream and the port over the WebSocket port-forward protocol: data on
// channel 0, errors on channel 1, each channel's first frame prefixed by
// the port (little endian).
func (r *Runtime) PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error {
	defer stream.Close()
	resp, err := r.rt.PortForward(ctx, &criv1.PortForwardRequest{PodSandboxId: podSandboxID, Port: []int32{port}})
	if err != nil {
		return wrap(err, "port forward "+podSandboxID)
	}
	u, err := url.Parse(resp.GetUrl())
	if err != nil {
		return fmt.Errorf("%w: %v", ErrStream, err)
	}
	q := u.Query()
	q.Set("port", strconv.Itoa(int(port)))
	u.RawQuery = q.Encode()
	conn, err := r.dialer(ctx, u.String(), []string{protoV4})
	if err != nil {
		return fmt.Errorf("port forward %s:%d: %w", podSandboxID, port, err)
	}
	defer conn.Close()
	stop := context.AfterFunc(ctx, func() { conn.Close() })
	defer stop()
	ws := &wsConn{conn: conn}
	go func() {
		buf := make([]byte, 32<<10)
		for {
			n, err := stream.Read(buf)
			if n > 0 && ws.send(0, buf[:n]) != nil {
				return
			}
			if err != nil {
				// The client is done sending; the answer may still come.
				return
			}
		}
	}()
	prefixed := [2]bool{}
	var errMsg []byte
	for {
		_, msg, err := conn.ReadMessage()
		if err != nil {
			break
		}
		if len(msg) < 1 || msg[0] > 1 {
			continue
		}
		ch, data := msg[0], msg[1:]
		if !prefixed[ch] {
			if len(data) < 2 {
				continue
			}
			if p := binary.LittleEndian.Uint16(data); int32(p) != port {
				return fmt.Errorf("%w: port %d on a stream of port %d", ErrStream, p, port)
			}
			prefixed[ch], data = true, data[2:]
		}
		if ch == 1 {
			errMsg = append(errMsg, data...)
			continue
		}
		if len(data) > 0 {
			if _, err := stream.Write(data); err != nil {
				return nil // the client went away
			}
		}
	}
	if ctx.Err() != nil {
		return ctx.Err()
	}
	if len(errMsg) > 0 {
		return fmt.Errorf("port forward %s:%d: %s", podSandboxID, port, errMsg)
	}
	return nil
}
