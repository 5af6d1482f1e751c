package probes

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strconv"
	"strings"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	healthpb "google.golang.org/grpc/health/grpc_health_v1"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/runtime"
)

// UserAgent is the User-Agent of HTTP probes, after Kubernetes' kube-probe.
const UserAgent = "kube-probe/1.37"

// maxBody is how much of an HTTP probe's answer is read.
const maxBody = 10 << 10

// Prober runs one probe once.
type Prober struct {
	Runtime runtime.Runtime
	// DialContext dials for httpGet, tcpSocket and grpc probes (nil: net.Dialer).
	DialContext func(ctx context.Context, network, addr string) (net.Conn, error)
}

// Target is what a probe is aimed at.
type Target struct {
	PodIP       string
	Container   *corev1.Container
	ContainerID string
}

// Run runs p against t and returns the outcome and, on failure, what went
// wrong in Kubernetes' words. An error means the probe could not be run
// at all (its outcome is thrown away).
func (pr *Prober) Run(ctx context.Context, p *corev1.Probe, t Target) (Result, string, error) {
	timeout := time.Duration(p.GetTimeoutSeconds()) * time.Second
	if timeout <= 0 {
		timeout = time.Second
	}
	switch {
	case p.GetExec() != nil:
		return pr.exec(ctx, p.GetExec(), t, timeout)
	case p.GetHttpGet() != nil:
		return pr.http(ctx, p.GetHttpGet(), t, timeout)
	case p.GetTcpSocket() != nil:
		return pr.tcp(ctx, p.GetTcpSocket(), t, timeout)
	case p.GetGrpc() != nil:
		return pr.grpc(ctx, p.GetGrpc(), t, timeout)
	}
	return Unknown, "", errors.New("probe has no handler")
}

func (pr *Prober) exec(ctx context.Context, a *corev1.ExecAction, t Target, timeout time.Duration) (Result, string, error) {
	res, err := pr.Runtime.ExecSync(ctx, t.ContainerID, a.GetCommand(), timeout)
	if err != nil {
		if errors.Is(err, context.DeadlineExceeded) {
			return Failure, fmt.Sprintf("command %q timed out", strings.Join(a.GetCommand(), " ")), nil
		}
		return Unknown, "", err
	}
	if res.ExitCode != 0 {
		out := strings.TrimSpace(string(res.Stdout) + string(res.Stderr))
		return Failure, out, nil
	}
	return Success, "", nil
}

func (pr *Prober) dial() func(ctx context.Context, network, addr string) (net.Conn, error) {
	if pr.DialContext != nil {
		return pr.DialContext
	}
	d := &net.Dialer{}
	return d.DialContext
}

// ResolvePort turns a probe's port (a number or a container port's name)
// into a number.
func ResolvePort(port *metav1.IntOrString, c *corev1.Container) (int, error) {
	if port.GetType() == 0 {
		if port.GetIntVal() <= 0 {
			return 0, fmt.Errorf("invalid port %d", port.GetIntVal())
		}
		return int(port.GetIntVal()), nil
	}
	name := port.GetStrVal()
	if n, err := strconv.Atoi(name); err == nil {
		return n, nil
	}
	for _, p := range c.GetPorts() {
		if p.GetName() == name {
			return int(p.GetContainerPort()), nil
		}
	}
	return 0, fmt.Errorf("couldn't find port %q in container %s", name, c.GetName())
}

func (pr *Prober) http(ctx context.Context, a *corev1.HTTPGetAction, t Target, timeout time.Duration) (Result, string, error) {
	port, err := ResolvePort(a.GetPort(), t.Container)
	if err != nil {
		return Unknown, "", err
	}
	host := a.GetHost()
	if host == "" {
		host = t.PodIP
	}
	scheme := strings.ToLower(a.GetScheme())
	if scheme == "" {
		scheme = "http"
	}
	path := a.GetPath()
	if !strings.HasPrefix(path, "/") {
		path = "/" + path
	}
	u := &url.URL{Scheme: scheme, Host: net.JoinHostPort(host, strconv.Itoa(port))}
	if pu, err := url.Parse(path); err == nil {
		u.Path, u.RawQuery = pu.Path, pu.RawQuery
	} else {
		u.Path = path
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u.String(), nil)
	if err != nil {
		return Unknown, "", err
	}
	req.Header.Set("User-Agent", UserAgent)
	req.Header.Set("Accept", "*/*")
	for _, h := range a.GetHttpHeaders() {
		if strings.EqualFold(h.GetName(), "Host") {
			req.Host = h.GetValue()
			continue
		}
		req.Header.Add(h.GetName(), h.GetValue())
	}
	client := &http.Client{
		Transport: &http.Transport{DialContext: pr.dial(), DisableKeepAlives: true, TLSClientConfig: insecureTLS()},
		// Follow redirects to the same host only, as Kubernetes does.
		CheckRedirect: func(r *http.Request, via []*http.Request) error {
			if len(via) >= 10 || r.URL.Hostname() != via[0].URL.Hostname() {
				return http.ErrUseLastResponse
			}
			return nil
		},
	}
	resp, err := client.Do(req)
	if err != nil {
		return Failure, fmt.Sprintf("Get %q: %v", u.String(), unwrapURLError(err)), nil
	}
	defer resp.Body.Close()
	_, _ = io.Copy(io.Discard, io.LimitReader(resp.Body, maxBody))
	if resp.StatusCode >= 200 && resp.StatusCode < 400 {
		return Success, "", nil
	}
	return Failure, fmt.Sprintf("HTTP probe failed with statuscode: %d", resp.StatusCode), nil
}

func unwrapURLError(err error) error {
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err
	}
	return err
}

func (pr *Prober) tcp(ctx context.Context, a *corev1.TCPSocketAction, t Target, timeout time.Duration) (Result, string, error) {
	port, err := ResolvePort(a.GetPort(), t.Container)
	if err != nil {
		return Unknown, "", err
	}
	host := a.GetHost()
	if host == "" {
		host = t.PodIP
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := pr.dial()(ctx, "tcp", net.JoinHostPort(host, strconv.Itoa(port)))
	if err != nil {
		return Failure, err.Error(), nil
	}
	_ = conn.Close()
	return Success, "", nil
}

func (pr *Prober) grpc(ctx context.Context, a *corev1.GRPCAction, t Target, timeout time.Duration) (Result, string, error) {
	addr := net.JoinHostPort(t.PodIP, strconv.Itoa(int(a.GetPort())))
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	conn, err := grpc.NewClient("passthrough:///"+addr,
		grpc.WithTransportCredentials(insecure.NewCredentials()),
		grpc.WithContextDialer(func(ctx context.Context, s string) (net.Conn, error) { return pr.dial()(ctx, "tcp", s) }),
		grpc.WithUserAgent(UserAgent))
	if err != nil {
		return Unknown, "", err
	}
	defer conn.Close()
	resp, err := healthpb.NewHealthClient(conn).Check(ctx, &healthpb.HealthCheckRequest{Service: a.GetService()})
	if err != nil {
		return Failure, fmt.Sprintf("failed to connect service %q within %s: %v", addr, timeout, err), nil
	}
	if resp.GetStatus() != healthpb.HealthCheckResponse_SERVING {
		return Failure, fmt.Sprintf("service unhealthy (responded with %q)", resp.GetStatus()), nil
	}
	return Success, "", nil
}
