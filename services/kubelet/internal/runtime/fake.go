package runtime

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/netip"
	"path/filepath"
	"slices"
	"sort"
	"strconv"
	"sync"
	"time"

	"podline.dev/pkg/clock"
)

// Fake is an in-memory Runtime for unit tests. Containers "run" from the
// moment they start until the test calls Exit or the kubelet stops them;
// images are present once added with AddImage or pulled (PullErr makes a
// pull fail). Calls are recorded in order for assertions.
type Fake struct {
	mu         sync.Mutex
	clock      clock.Clock
	seq        int
	sandboxes  map[string]*Sandbox
	containers map[string]*Container
	images     map[string]*Image
	calls      []string
	sbConfigs  map[string]*SandboxConfig

	// the pod network: one address per sandbox from prefix
	prefix     netip.Prefix
	nextIP     netip.Addr
	netErr     error
	adds, dels int

	pullErr  func(ref string) error
	execFunc func(c *Container, cmd []string) (*ExecResult, error)
	startErr func(c *Container) error
	// portAddr maps a forwarded port to the address the fake dials.
	portAddr func(sb *Sandbox, port int32) string
}

var _ Runtime = (*Fake)(nil)

// NewFake returns an empty fake runtime reading time from c (nil: real time).
func NewFake(c clock.Clock) *Fake {
	if c == nil {
		c = clock.Real{}
	}
	p := netip.MustParsePrefix(FakePodCIDR)
	return &Fake{clock: c, sandboxes: map[string]*Sandbox{}, containers: map[string]*Container{}, images: map[string]*Image{},
		prefix: p, nextIP: p.Addr().Next().Next()}
}

// FakePodCIDR is where the fake's sandboxes get their addresses, from .2 on.
const FakePodCIDR = "10.244.1.0/24"

// SandboxConfig is the config sandbox id was run with, or nil.
func (f *Fake) SandboxConfig(id string) *SandboxConfig {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.sbConfigs[id]
}

// SetNetworkErr makes the pod network fail: RunPodSandbox of a sandbox
// outside the host's network and Status return err (nil: ready again).
func (f *Fake) SetNetworkErr(err error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.netErr = err
}

// Attached is the number of sandboxes holding a pod network address.
func (f *Fake) Attached() int {
	f.mu.Lock()
	defer f.mu.Unlock()
	n := 0
	for _, sb := range f.sandboxes {
		if len(sb.IPs) > 0 {
			n++
		}
	}
	return n
}

// NetworkCalls counts the sandboxes attached to (CNI ADD) and detached
// from (CNI DEL) the pod network.
func (f *Fake) NetworkCalls() (adds, dels int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.adds, f.dels
}

// UpdatePodCIDR hands out addresses from cidr from .2 on.
func (f *Fake) UpdatePodCIDR(_ context.Context, cidr string) error {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return err
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if p != f.prefix {
		f.prefix, f.nextIP = p, p.Addr().Next().Next()
	}
	return nil
}

func (f *Fake) Status(context.Context) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.netErr != nil {
		return fmt.Errorf("%w: %v", ErrNetworkNotReady, f.netErr)
	}
	return nil
}

func (f *Fake) record(format string, args ...any) {
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

// Calls returns the calls made so far ("RunPodSandbox web", "StartContainer web/app", ...).
func (f *Fake) Calls() []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	return slices.Clone(f.calls)
}

// ResetCalls forgets the calls recorded so far.
func (f *Fake) ResetCalls() {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = nil
}

// AddImage makes ref present.
func (f *Fake) AddImage(ref string, size int64) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.images[ref] = &Image{ID: "sha256:" + fmt.Sprintf("%064x", len(f.images)+1), RepoTags: []string{ref}, Size: size}
}

// SetPullErr makes PullImage fail for refs fn returns an error for.
func (f *Fake) SetPullErr(fn func(ref string) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.pullErr = fn
}

// SetExecFunc answers ExecSync (and so exec probes) with fn; nil answers exit 0.
func (f *Fake) SetExecFunc(fn func(c *Container, cmd []string) (*ExecResult, error)) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.execFunc = fn
}

// SetStartErr makes StartContainer fail for containers fn returns an error for.
func (f *Fake) SetStartErr(fn func(c *Container) error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.startErr = fn
}

// SetPortForwardAddr makes PortForward dial the host:port fn returns for
// a sandbox's port; without it PortForward dials 127.0.0.1:port on the
// host.
func (f *Fake) SetPortForwardAddr(fn func(sb *Sandbox, port int32) string) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.portAddr = fn
}

// Exit ends a running container with an exit code, as a crash would.
func (f *Fake) Exit(id string, code int) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.containers[id]; c != nil && c.State == ContainerRunning {
		f.exitLocked(c, code)
	}
}

func (f *Fake) exitLocked(c *Container, code int) {
	c.State = ContainerExited
	c.ExitCode = code
	c.FinishedAt = f.clock.Now()
	c.Reason = "Completed"
	if code != 0 {
		c.Reason = "Error"
	}
}

// Running returns the IDs of running containers named name (any pod).
func (f *Fake) Running(name string) []string {
	f.mu.Lock()
	defer f.mu.Unlock()
	var ids []string
	for id, c := range f.containers {
		if c.Name == name && c.State == ContainerRunning {
			ids = append(ids, id)
		}
	}
	sort.Strings(ids)
	return ids
}

func (f *Fake) Version(context.Context) (string, string, error) { return "fake", "0.1.0", nil }

func (f *Fake) RunPodSandbox(_ context.Context, cfg *SandboxConfig) (*Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.seq++
	sb := &Sandbox{
		ID: fmt.Sprintf("sandbox-%d", f.seq), Pod: cfg.Pod, State: SandboxReady, CreatedAt: f.clock.Now(),
		Attempt: cfg.Attempt, HostNetwork: cfg.HostNetwork,
	}
	if !cfg.HostNetwork {
		f.adds++
		if f.netErr != nil {
			return nil, fmt.Errorf("failed to setup network for sandbox %q: %w", sb.ID, f.netErr)
		}
		if !f.prefix.Contains(f.nextIP) {
			return nil, fmt.Errorf("failed to setup network for sandbox %q: no addresses left in %s", sb.ID, f.prefix)
		}
		sb.IPs = []string{f.nextIP.String()}
		f.nextIP = f.nextIP.Next()
	}
	f.sandboxes[sb.ID] = sb
	if f.sbConfigs == nil {
		f.sbConfigs = map[string]*SandboxConfig{}
	}
	f.sbConfigs[sb.ID] = cfg
	f.record("RunPodSandbox %s", cfg.Pod.Name)
	cp := *sb
	cp.IPs = slices.Clone(sb.IPs)
	return &cp, nil
}

func (f *Fake) StopPodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb := f.sandboxes[id]; sb != nil {
		for _, c := range f.containers {
			if c.SandboxID == id && c.State == ContainerRunning {
				f.exitLocked(c, 137)
			}
		}
		if len(sb.IPs) > 0 {
			f.dels++
			sb.IPs = nil
		}
		sb.State = SandboxNotReady
		f.record("StopPodSandbox %s", sb.Pod.Name)
	}
	return nil
}

func (f *Fake) RemovePodSandbox(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if sb := f.sandboxes[id]; sb != nil {
		delete(f.sandboxes, id)
		f.record("RemovePodSandbox %s", sb.Pod.Name)
	}
	return nil
}

func (f *Fake) ListPodSandboxes(_ context.Context, podUID string) ([]*Sandbox, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Sandbox
	for _, sb := range f.sandboxes {
		if podUID == "" || sb.Pod.UID == podUID {
			cp := *sb
			cp.IPs = slices.Clone(sb.IPs)
			out = append(out, &cp)
		}
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}

func (f *Fake) CreateContainer(_ context.Context, sb *Sandbox, cfg *ContainerConfig) (string, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	img := f.images[cfg.Image]
	if img == nil {
		return "", fmt.Errorf("image %s: %w", cfg.Image, ErrImageNotPresent)
	}
	f.seq++
	c := &Container{
		ID: fmt.Sprintf("c%d-%s", f.seq, cfg.Name), SandboxID: sb.ID, Pod: sb.Pod, Name: cfg.Name,
		Attempt: cfg.Attempt, Init: cfg.Init, Hash: cfg.Hash, Image: cfg.Image, ImageID: img.ID,
		State: ContainerCreated, CreatedAt: f.clock.Now(), LogPath: cfg.LogPath,
	}
	if cfg.Sandbox != nil {
		c.LogPath = filepath.Join(cfg.Sandbox.LogDir, cfg.LogPath)
	}
	f.containers[c.ID] = c
	f.record("CreateContainer %s/%s", sb.Pod.Name, cfg.Name)
	return c.ID, nil
}

func (f *Fake) StartContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[id]
	if c == nil {
		return fmt.Errorf("container %s: %w", id, ErrNotFound)
	}
	f.record("StartContainer %s/%s", c.Pod.Name, c.Name)
	if f.startErr != nil {
		if err := f.startErr(c); err != nil {
			c.State = ContainerExited
			c.ExitCode = 128
			c.Reason = "StartError"
			c.Message = err.Error()
			c.FinishedAt = f.clock.Now()
			return err
		}
	}
	c.State = ContainerRunning
	c.StartedAt = f.clock.Now()
	return nil
}

func (f *Fake) StopContainer(_ context.Context, id string, timeout time.Duration) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	c := f.containers[id]
	if c == nil {
		return nil
	}
	if c.State == ContainerRunning {
		f.record("StopContainer %s/%s", c.Pod.Name, c.Name)
		f.exitLocked(c, 137)
	}
	return nil
}

func (f *Fake) RemoveContainer(_ context.Context, id string) error {
	f.mu.Lock()
	defer f.mu.Unlock()
	if c := f.containers[id]; c != nil {
		f.record("RemoveContainer %s/%s", c.Pod.Name, c.Name)
		delete(f.containers, id)
	}
	return nil
}

func (f *Fake) ListContainers(_ context.Context, podUID string) ([]*Container, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Container
	for _, c := range f.containers {
		if podUID == "" || c.Pod.UID == podUID {
			cp := *c
			out = append(out, &cp)
		}
	}
	sort.Slice(out, func(i, j int) bool {
		return out[i].CreatedAt.Before(out[j].CreatedAt) || out[i].CreatedAt.Equal(out[j].CreatedAt) && out[i].ID < out[j].ID
	})
	return out, nil
}

func (f *Fake) ExecSync(_ context.Context, id string, cmd []string, _ time.Duration) (*ExecResult, error) {
	f.mu.Lock()
	c := f.containers[id]
	fn := f.execFunc
	var cp Container
	running := c != nil && c.State == ContainerRunning
	if running {
		cp = *c
	}
	f.mu.Unlock()
	if !running {
		return nil, fmt.Errorf("container %s: %w", id, ErrNotRunning)
	}
	if fn == nil {
		return &ExecResult{}, nil
	}
	return fn(&cp, cmd)
}

func (f *Fake) Exec(ctx context.Context, id string, opts ExecOptions) (int, error) {
	res, err := f.ExecSync(ctx, id, opts.Cmd, 0)
	if err != nil {
		return 0, err
	}
	if opts.Stdout != nil {
		_, _ = opts.Stdout.Write(res.Stdout)
	}
	if opts.Stderr != nil {
		_, _ = opts.Stderr.Write(res.Stderr)
	}
	return res.ExitCode, nil
}

// PortForward dials the address SetPortForwardAddr chose and splices
// stream to it.
func (f *Fake) PortForward(ctx context.Context, podSandboxID string, port int32, stream io.ReadWriteCloser) error {
	f.mu.Lock()
	sb := f.sandboxes[podSandboxID]
	var addr string
	if sb != nil {
		cp := *sb
		addr = net.JoinHostPort("127.0.0.1", strconv.Itoa(int(port)))
		if f.portAddr != nil {
			addr = f.portAddr(&cp, port)
		}
	}
	f.record("PortForward %s %d", podSandboxID, port)
	f.mu.Unlock()
	if sb == nil {
		stream.Close()
		return fmt.Errorf("sandbox %s: %w", podSandboxID, ErrNotFound)
	}
	var d net.Dialer
	conn, err := d.DialContext(ctx, "tcp", addr)
	if err != nil {
		stream.Close()
		return err
	}
	return Splice(ctx, stream, conn)
}

func (f *Fake) PullImage(_ context.Context, ref string) (string, error) {
	f.mu.Lock()
	pullErr := f.pullErr
	f.record("PullImage %s", ref)
	f.mu.Unlock()
	if pullErr != nil {
		if err := pullErr(ref); err != nil {
			return "", err
		}
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.images[ref] == nil {
		f.images[ref] = &Image{ID: "sha256:" + fmt.Sprintf("%064x", len(f.images)+1), RepoTags: []string{ref}, Size: 1 << 20}
	}
	return f.images[ref].ID, nil
}

func (f *Fake) ImageStatus(_ context.Context, ref string) (*Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	img := f.images[ref]
	if img == nil {
		return nil, fmt.Errorf("image %s: %w", ref, ErrNotFound)
	}
	cp := *img
	return &cp, nil
}

func (f *Fake) ListImages(context.Context) ([]*Image, error) {
	f.mu.Lock()
	defer f.mu.Unlock()
	var out []*Image
	for _, img := range f.images {
		cp := *img
		out = append(out, &cp)
	}
	sort.Slice(out, func(i, j int) bool { return out[i].ID < out[j].ID })
	return out, nil
}
