package nodestatus

import (
	"context"
	"fmt"
	"log/slog"
	"maps"
	"sync"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	coordinationv1 "podline.dev/proto/coordination/v1"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
)

// NodeClient and LeaseClient are the parts of the typed clients the
// controller uses.
type NodeClient interface {
	Get(ctx context.Context, namespace, name string) (*corev1.Node, error)
	Create(ctx context.Context, n *corev1.Node) (*corev1.Node, error)
	Update(ctx context.Context, n *corev1.Node) (*corev1.Node, error)
	UpdateStatus(ctx context.Context, n *corev1.Node) (*corev1.Node, error)
}

type LeaseClient interface {
	Get(ctx context.Context, namespace, name string) (*coordinationv1.Lease, error)
	Create(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)
	Update(ctx context.Context, l *coordinationv1.Lease) (*coordinationv1.Lease, error)
}

// Config is the node's identity and timing.
type Config struct {
	NodeName    string
	Labels      map[string]string
	Taints      []*corev1.Taint
	PodCIDR     string
	Addresses   []*corev1.NodeAddress
	KubeletPort int32
	Info        *corev1.NodeSystemInfo
	Capacity    resource.List
	Reserved    resource.List
	// LeaseDuration (40 s) and RenewInterval (10 s) of the node's Lease.
	LeaseDuration time.Duration
	RenewInterval time.Duration
	// UpdateInterval is how often the status is computed (10 s);
	// ReportInterval how often it is written when unchanged (1 min).
	UpdateInterval time.Duration
	ReportInterval time.Duration
}

// Probes answer the questions the status needs answered each time.
type Probes struct {
	// Images lists the images present.
	Images func(ctx context.Context) ([]*runtime.Image, error)
	// Signals measures memory, disk and PIDs.
	Signals func() Signals
	// NotReady says why the node is not ready ("" when it is).
	NotReady func(ctx context.Context) string
}

// Controller registers the node and keeps its status and lease current.
type Controller struct {
	cfg    Config
	nodes  NodeClient
	leases LeaseClient
	probes Probes
	clock  clock.Clock
	log    *slog.Logger

	mu         sync.RWMutex
	node       *corev1.Node
	lastReport time.Time
	lease      *coordinationv1.Lease
	onCIDR     []func(string)
	kick       chan struct{}
}

// NewController returns a Controller.
func NewController(cfg Config, nodes NodeClient, leases LeaseClient, probes Probes, c clock.Clock, log *slog.Logger) *Controller {
	if cfg.LeaseDuration <= 0 {
		cfg.LeaseDuration = 40 * time.Second
	}
	if cfg.RenewInterval <= 0 {
		cfg.RenewInterval = 10 * time.Second
	}
	if cfg.UpdateInterval <= 0 {
		cfg.UpdateInterval = 10 * time.Second
	}
	if cfg.ReportInterval <= 0 {
		cfg.ReportInterval = time.Minute
	}
	return &Controller{cfg: cfg, nodes: nodes, leases: leases, probes: probes, clock: c, log: log, kick: make(chan struct{}, 1)}
}

// OnPodCIDR calls fn with the node's pod CIDR once it is known.
func (c *Controller) OnPodCIDR(fn func(string)) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.onCIDR = append(c.onCIDR, fn)
}

// Node is the Node as last written (nil before registration).
func (c *Controller) Node() *corev1.Node {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.node
}

// Allocatable is what pods may use.
func (c *Controller) Allocatable() resource.List {
	return Allocatable(c.cfg.Capacity, c.cfg.Reserved)
}

// Kick asks for a status update now (the network became ready).
func (c *Controller) Kick() {
	select {
	case c.kick <- struct{}{}:
	default:
	}
}

func (c *Controller) status(ctx context.Context, prev *corev1.NodeStatus) *corev1.NodeStatus {
	in := Input{
		Capacity: c.cfg.Capacity, Reserved: c.cfg.Reserved, Addresses: c.cfg.Addresses,
		KubeletPort: c.cfg.KubeletPort, Info: c.cfg.Info, Now: c.clock.Now(),
	}
	if c.probes.Images != nil {
		if imgs, err := c.probes.Images(ctx); err == nil {
			in.Images = imgs
		} else {
			c.log.Warn("list images", "err", err)
		}
	}
	if c.probes.Signals != nil {
		in.MemoryPressure, in.DiskPressure, in.PIDPressure = c.probes.Signals().Pressure()
	}
	if c.probes.NotReady != nil {
		in.NotReady = c.probes.NotReady(ctx)
	}
	return BuildStatus(prev, in)
}

// Register creates the Node, or adopts the one that exists, retrying
// until it succeeds or ctx ends.
func (c *Controller) Register(ctx context.Context) error {
	delay := 100 * time.Millisecond
	for {
		err := c.register(ctx)
		if err == nil {
			return nil
		}
		c.log.Warn("register node", "node", c.cfg.NodeName, "err", err)
		select {
		case <-ctx.Done():
			return ctx.Err()
		case <-c.clock.After(delay):
		}
		delay = min(delay*2, 7*time.Second)
	}
}

func (c *Controller) register(ctx context.Context) error {
	node := &corev1.Node{
		Metadata: &metav1.ObjectMeta{Name: c.cfg.NodeName, Labels: c.labels(nil)},
		Spec:     &corev1.NodeSpec{Taints: c.cfg.Taints, PodCidr: c.cfg.PodCIDR},
	}
	if c.cfg.PodCIDR != "" {
		node.Spec.PodCidrs = []string{c.cfg.PodCIDR}
	}
	node.Status = c.status(ctx, nil)
	out, err := c.nodes.Create(ctx, node)
	if apierrors.IsAlreadyExists(err) {
		out, err = c.adopt(ctx)
	}
	if err != nil {
		return err
	}
	c.setNode(out)
	c.mu.Lock()
	c.lastReport = c.clock.Now()
	c.mu.Unlock()
	c.log.Info("node registered", "node", c.cfg.NodeName, "podCIDR", out.GetSpec().GetPodCidr())
	return nil
}

// adopt updates an existing Node: labels, the pod CIDR if it had none,
// and the status.
func (c *Controller) adopt(ctx context.Context) (*corev1.Node, error) {
	cur, err := c.nodes.Get(ctx, "", c.cfg.NodeName)
	if err != nil {
		return nil, err
	}
	next := object.Copy(cur)
	if next.Metadata == nil {
		next.Metadata = &metav1.ObjectMeta{}
	}
	next.Metadata.Labels = c.labels(next.Metadata.Labels)
	if next.Spec == nil {
		next.Spec = &corev1.NodeSpec{}
	}
	if next.Spec.PodCidr == "" && c.cfg.PodCIDR != "" {
		next.Spec.PodCidr, next.Spec.PodCidrs = c.cfg.PodCIDR, []string{c.cfg.PodCIDR}
	}
	if !proto.Equal(next, cur) {
		if cur, err = c.nodes.Update(ctx, next); err != nil {
			return nil, err
		}
	}
	next = object.Copy(cur)
	next.Status = c.status(ctx, cur.GetStatus())
	return c.nodes.UpdateStatus(ctx, next)
}

func (c *Controller) labels(existing map[string]string) map[string]string {
	out := maps.Clone(existing)
	if out == nil {
		out = map[string]string{}
	}
	out["kubernetes.io/hostname"] = c.cfg.NodeName
	out["kubernetes.io/os"] = "linux"
	if c.cfg.Info != nil && c.cfg.Info.Architecture != "" {
		out["kubernetes.io/arch"] = c.cfg.Info.Architecture
	}
	maps.Copy(out, c.cfg.Labels)
	return out
}

func (c *Controller) setNode(n *corev1.Node) {
	c.mu.Lock()
	prev := c.node.GetSpec().GetPodCidr()
	c.node = n
	fns := append([]func(string){}, c.onCIDR...)
	c.mu.Unlock()
	if cidr := n.GetSpec().GetPodCidr(); cidr != "" && cidr != prev {
		for _, fn := range fns {
			fn(cidr)
		}
	}
}

// Run renews the lease and updates the status until ctx ends. Call
// Register first.
func (c *Controller) Run(ctx context.Context) {
	var wg sync.WaitGroup
	wg.Go(func() { c.leaseLoop(ctx) })
	wg.Go(func() { c.statusLoop(ctx) })
	wg.Wait()
}

func (c *Controller) statusLoop(ctx context.Context) {
	for {
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(c.cfg.UpdateInterval):
		case <-c.kick:
		}
		if err := c.UpdateStatus(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("update node status", "node", c.cfg.NodeName, "err", err)
		}
	}
}

// UpdateStatus writes the node's status if it changed or the report
// interval passed.
func (c *Controller) UpdateStatus(ctx context.Context) error {
	c.mu.RLock()
	cur, last := c.node, c.lastReport
	c.mu.RUnlock()
	if cur == nil {
		return fmt.Errorf("node %s is not registered", c.cfg.NodeName)
	}
	st := c.status(ctx, cur.GetStatus())
	if !Changed(cur.GetStatus(), st) && c.clock.Since(last) < c.cfg.ReportInterval {
		return nil
	}
	for attempt := 0; ; attempt++ {
		next := object.Copy(cur)
		next.Status = st
		next.Metadata.ResourceVersion = ""
		out, err := c.nodes.UpdateStatus(ctx, next)
		if err == nil {
			c.setNode(out)
			c.mu.Lock()
			c.lastReport = c.clock.Now()
			c.mu.Unlock()
			return nil
		}
		if !apierrors.IsNotFound(err) || attempt > 0 {
			return err
		}
		// Deleted under us: register again.
		if err := c.register(ctx); err != nil {
			return err
		}
		return nil
	}
}

func (c *Controller) leaseLoop(ctx context.Context) {
	for {
		if err := c.renew(ctx); err != nil && ctx.Err() == nil {
			c.log.Warn("renew node lease", "node", c.cfg.NodeName, "err", err)
		}
		select {
		case <-ctx.Done():
			return
		case <-c.clock.After(c.cfg.RenewInterval):
		}
	}
}

// renew creates or renews the node's Lease in kube-node-lease.
func (c *Controller) renew(ctx context.Context) error {
	now := c.clock.Now()
	renew := &metav1.MicroTime{Seconds: now.Unix(), Nanos: int32(now.Nanosecond() / 1000 * 1000)}
	c.mu.RLock()
	lease, node := c.lease, c.node
	c.mu.RUnlock()
	if lease == nil {
		got, err := c.leases.Get(ctx, LeaseNamespace, c.cfg.NodeName)
		switch {
		case apierrors.IsNotFound(err):
			l := &coordinationv1.Lease{
				Metadata: &metav1.ObjectMeta{Name: c.cfg.NodeName, Namespace: LeaseNamespace},
				Spec: &coordinationv1.LeaseSpec{
					HolderIdentity:       proto.String(c.cfg.NodeName),
					LeaseDurationSeconds: proto.Int32(int32(c.cfg.LeaseDuration / time.Second)),
					RenewTime:            renew,
				},
			}
			if node != nil {
				l.Metadata.OwnerReferences = []*metav1.OwnerReference{{
					ApiVersion: "v1", Kind: "Node", Name: node.GetMetadata().GetName(), Uid: node.GetMetadata().GetUid(),
				}}
			}
			out, err := c.leases.Create(ctx, l)
			if err != nil {
				return err
			}
			c.setLease(out)
			return nil
		case err != nil:
			return err
		}
		lease = got
	}
	next := object.Copy(lease)
	if next.Spec == nil {
		next.Spec = &coordinationv1.LeaseSpec{}
	}
	next.Spec.HolderIdentity = proto.String(c.cfg.NodeName)
	next.Spec.LeaseDurationSeconds = proto.Int32(int32(c.cfg.LeaseDuration / time.Second))
	next.Spec.RenewTime = renew
	out, err := c.leases.Update(ctx, next)
	if err != nil {
		c.setLease(nil) // re-read next time (conflict or deleted)
		return err
	}
	c.setLease(out)
	return nil
}

func (c *Controller) setLease(l *coordinationv1.Lease) {
	c.mu.Lock()
	defer c.mu.Unlock()
	c.lease = l
}

// Lease is the Lease as last written.
func (c *Controller) Lease() *coordinationv1.Lease {
	c.mu.RLock()
	defer c.mu.RUnlock()
	return c.lease
}

// LeaseNamespace holds the nodes' Leases.
const LeaseNamespace = "kube-node-lease"
