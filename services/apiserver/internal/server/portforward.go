package server

import (
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"net/url"
	"strings"
	"sync"
	"time"

	"github.com/gorilla/websocket"

	"podline.dev/pkg/apierrors"
)

// kubectl tunnels port-forward's SPDY through a WebSocket
// (PortForwardOverWebsockets, on by default since 1.31): it asks for the
// subprotocol "SPDY/3.1+portforward.k8s.io" and then writes SPDY frames as
// binary messages. The kubelet speaks SPDY over a plain HTTP upgrade, so
// the apiserver translates, as kube-apiserver's tunneling handler does.
const (
	spdyTunnelPrefix = "SPDY/3.1+"
	spdy31           = "SPDY/3.1"
	// streamProtocolHeader names the stream protocol of an SPDY upgrade.
	streamProtocolHeader = "X-Stream-Protocol-Version"
)

// isSPDYTunnel is a WebSocket upgrade asking for a tunneled SPDY protocol.
func isSPDYTunnel(r *http.Request) bool {
	return websocket.IsWebSocketUpgrade(r) && len(tunneledProtocols(r)) > 0
}

// tunneledProtocols are the SPDY stream protocols the client offers inside
// its WebSocket subprotocols ("SPDY/3.1+portforward.k8s.io" offers
// "portforward.k8s.io").
func tunneledProtocols(r *http.Request) []string {
	var out []string
	for _, p := range websocket.Subprotocols(r) {
		if inner, ok := strings.CutPrefix(p, spdyTunnelPrefix); ok && inner != "" {
			out = append(out, inner)
		}
	}
	return out
}

// tunnelPortForward upgrades to SPDY at the kubelet first, offering the
// protocols the client tunnels; only once the kubelet has switched does it
// accept the client's WebSocket, with the tunneled form of the protocol
// the kubelet chose. A kubelet that refuses answers the client as it
// answered (its status and body); one that cannot be reached is a 503.
// Then each binary message from the client is written to the kubelet's
// connection and each read from the kubelet is sent as a binary message,
// until either side closes.
func (s *Server) tunnelPortForward(w http.ResponseWriter, r *http.Request, target *url.URL, transport http.RoundTripper, namespace, name string) {
	u := *target
	u.RawQuery = r.URL.RawQuery
	out, err := http.NewRequestWithContext(r.Context(), http.MethodPost, u.String(), nil)
	if err != nil {
		writeStatus(w, apierrors.NewBadRequest(err.Error()))
		return
	}
	out.Header.Set("Connection", "Upgrade")
	out.Header.Set("Upgrade", spdy31)
	for _, p := range tunneledProtocols(r) {
		out.Header.Add(streamProtocolHeader, p)
	}
	if tp := r.Header.Get("Traceparent"); tp != "" {
		out.Header.Set("Traceparent", tp)
	}
	resp, err := transport.RoundTrip(out)
	if err != nil {
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("error dialing the kubelet of pod %s/%s: %v", namespace, name, err)))
		return
	}
	if resp.StatusCode != http.StatusSwitchingProtocols {
		defer resp.Body.Close()
		for k, vs := range resp.Header {
			w.Header()[k] = vs
		}
		w.WriteHeader(resp.StatusCode)
		_, _ = io.Copy(w, resp.Body)
		return
	}
	kubelet, ok := resp.Body.(io.ReadWriteCloser)
	if !ok {
		resp.Body.Close()
		writeStatus(w, apierrors.NewServiceUnavailable(fmt.Sprintf("the kubelet of pod %s/%s switched protocols without a connection", namespace, name)))
		return
	}
	defer kubelet.Close()
	up := websocket.Upgrader{
		Subprotocols: []string{spdyTunnelPrefix + resp.Header.Get(streamProtocolHeader)},
		// The client authenticated with its credentials, not a cookie.
		CheckOrigin:     func(*http.Request) bool { return true },
		ReadBufferSize:  32 << 10,
		WriteBufferSize: 32 << 10,
	}
	ws, err := up.Upgrade(w, r, nil)
	if err != nil {
		return // the upgrader answered the client
	}
	defer ws.Close()
	slog.Debug("port-forward tunnel open", "pod", namespace+"/"+name, "kubelet", target.Host)
	relayTunnel(ws, kubelet)
}

// relayTunnel copies between the client's WebSocket and the kubelet's
// SPDY connection until one side ends, then closes both (the client's
// with a normal closure, which its tunnel reads as EOF).
func relayTunnel(ws *websocket.Conn, kubelet io.ReadWriteCloser) {
	var once sync.Once
	done := make(chan struct{})
	stop := func() {
		once.Do(func() {
			close(done)
			_ = ws.WriteControl(websocket.CloseMessage, websocket.FormatCloseMessage(websocket.CloseNormalClosure, ""), time.Now().Add(time.Second))
			kubelet.Close()
			ws.Close()
		})
	}
	var wg sync.WaitGroup
	wg.Add(2)
	go func() {
		defer wg.Done()
		defer stop()
		for {
			typ, rd, err := ws.NextReader()
			if err != nil {
				return
			}
			if typ != websocket.BinaryMessage {
				continue
			}
			if _, err := io.Copy(kubelet, rd); err != nil {
				return
			}
		}
	}()
	go func() {
		defer wg.Done()
		defer stop()
		buf := make([]byte, 32<<10)
		for {
			n, err := kubelet.Read(buf)
			if n > 0 {
				if werr := ws.WriteMessage(websocket.BinaryMessage, buf[:n]); werr != nil {
					return
				}
			}
			if err != nil {
				return
			}
		}
	}()
	wg.Wait()
}
