package server

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"
	"net/http"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"podline.dev/services/kubelet/internal/runtime"
)

// Stream IDs of Kubernetes' channel protocols.
const (
	streamStdin  = 0
	streamStdout = 1
	streamStderr = 2
	streamError  = 3
	streamResize = 4
	streamClose  = 255 // v5: the client closed a stream

	ProtocolV5 = "v5.channel.k8s.io"
	ProtocolV4 = "v4.channel.k8s.io"
)

var upgrader = websocket.Upgrader{
	Subprotocols:    []string{ProtocolV5, ProtocolV4},
	CheckOrigin:     func(*http.Request) bool { return true },
	ReadBufferSize:  32 << 10,
	WriteBufferSize: 32 << 10,
}

func (s *Server) exec(w http.ResponseWriter, r *http.Request) {
	q := r.URL.Query()
	cmd := q["command"]
	if len(cmd) == 0 {
		http.Error(w, "you must specify at least 1 command", http.StatusBadRequest)
		return
	}
	c, err := s.container(r.Context(), r.PathValue("namespace"), r.PathValue("pod"), r.PathValue("container"), false)
	if err != nil {
		httpError(w, err)
		return
	}
	if c.State != runtime.ContainerRunning {
		httpError(w, fmt.Errorf("container %s is not running: %w", c.Name, runtime.ErrNotRunning))
		return
	}
	if websocket.IsWebSocketUpgrade(r) {
		s.execWebSocket(w, r, c, cmd, flag(q.Get("stdin")), flag(q.Get("tty")))
		return
	}
	var out bytes.Buffer
	code, err := s.runtime.Exec(r.Context(), c.ID, runtime.ExecOptions{Cmd: cmd, Stdout: &out, Stderr: &out})
	if err != nil {
		httpError(w, err)
		return
	}
	w.Header().Set("X-Exit-Code", strconv.Itoa(code))
	w.Header().Set("Content-Type", "text/plain")
	_, _ = w.Write(out.Bytes())
}

func flag(v string) bool { return v == "1" || v == "true" }

// wsWriter writes one stream's bytes as channel messages.
type wsWriter struct {
	mu     *sync.Mutex
	conn   *websocket.Conn
	stream byte
}

func (w *wsWriter) Write(p []byte) (int, error) {
	w.mu.Lock()
	defer w.mu.Unlock()
	msg := make([]byte, len(p)+1)
	msg[0] = w.stream
	copy(msg[1:], p)
	if err := w.conn.WriteMessage(websocket.BinaryMessage, msg); err != nil {
		return 0, err
	}
	return len(p), nil
}

// status is the Status written on the error stream when the command ends.
type status struct {
	Metadata struct{} `json:"metadata"`
	Status   string   `json:"status"`
	Message  string   `json:"message,omitempty"`
	Reason   string   `json:"reason,omitempty"`
	Details  *details `json:"details,omitempty"`
}

type details struct {
	Causes []cause `json:"causes"`
}

type cause struct {
	Reason  string `json:"reason"`
	Message string `json:"message"`
}

func (s *Server) execWebSocket(w http.ResponseWriter, r *http.Request, c *runtime.Container, cmd []string, stdin, tty bool) {
	conn, err := upgrader.Upgrade(w, r, nil)
	if err != nil {
		return
	}
	defer conn.Close()
	var mu sync.Mutex
	stdout := &wsWriter{mu: &mu, conn: conn, stream: streamStdout}
	stderr := &wsWriter{mu: &mu, conn: conn, stream: streamStderr}

	var inR *io.PipeReader
	var inW *io.PipeWriter
	if stdin {
		inR, inW = io.Pipe()
	}
	resize := make(chan runtime.TermSize, 4)
	go func() {
		defer close(resize)
		defer func() {
			if inW != nil {
				inW.Close()
			}
		}()
		for {
			_, msg, err := conn.ReadMessage()
			if err != nil || len(msg) == 0 {
				return
			}
			switch msg[0] {
			case streamStdin:
				if inW != nil {
					if _, err := inW.Write(msg[1:]); err != nil {
						return
					}
				}
			case streamResize:
				var sz struct{ Width, Height uint16 }
				if json.Unmarshal(msg[1:], &sz) == nil {
					select {
					case resize <- runtime.TermSize{Width: sz.Width, Height: sz.Height}:
					default:
					}
				}
			case streamClose:
				if len(msg) > 1 && msg[1] == streamStdin && inW != nil {
					inW.Close()
				}
			}
		}
	}()
	opts := runtime.ExecOptions{Cmd: cmd, Stdout: stdout, Stderr: stderr, TTY: tty, Resize: resize}
	if inR != nil {
		opts.Stdin = inR
	}
	if tty {
		opts.Stderr = nil
	}
	code, err := s.runtime.Exec(r.Context(), c.ID, opts)
	st := status{Status: "Success"}
	switch {
	case err != nil:
		st = status{Status: "Failure", Message: err.Error(), Reason: "InternalError"}
	case code != 0:
		st = status{
			Status:  "Failure",
			Message: fmt.Sprintf("command terminated with non-zero exit code: error executing command [%s], exit code %d", strings.Join(cmd, " "), code),
			Reason:  "NonZeroExitCode",
			Details: &details{Causes: []cause{{Reason: "ExitCode", Message: strconv.Itoa(code)}}},
		}
	}
	b, _ := json.Marshal(st)
	_, _ = (&wsWriter{mu: &mu, conn: conn, stream: streamError}).Write(b)
	mu.Lock()
	_ = conn.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
	mu.Unlock()
}
