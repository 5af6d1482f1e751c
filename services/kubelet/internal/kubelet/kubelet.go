package kubelet

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	goruntime "runtime"
	"sync"
	"time"

	"go.opentelemetry.io/otel"
	"go.opentelemetry.io/otel/trace"
	"google.golang.org/grpc"

	"podline.dev/pkg/client"
	"podline.dev/pkg/client/cache"
	"podline.dev/pkg/client/record"
	"podline.dev/pkg/clock"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/kubelet/internal/backoff"
	"podline.dev/services/kubelet/internal/events"
	"podline.dev/services/kubelet/internal/kuberuntime"
	"podline.dev/services/kubelet/internal/nodestatus"
	"podline.dev/services/kubelet/internal/poddns"
	"podline.dev/services/kubelet/internal/podworkers"
	"podline.dev/services/kubelet/internal/probes"
	"podline.dev/services/kubelet/internal/resource"
	"podline.dev/services/kubelet/internal/runtime"
	"podline.dev/services/kubelet/internal/staticpods"
	"podline.dev/services/kubelet/internal/status"
	"podline.dev/services/kubelet/internal/volumes"
)

// Version is the kubelet version the Node reports.
const Version = "v1.37.0-podline"

// Config is the node's identity, layout and timing.
type Config struct {
	NodeName string
	// NodeIPs are the node's addresses (hostIP of its pods).
	NodeIPs []string
	PodCIDR string
	Taints  []*corev1.Taint
	Labels  map[string]string
	// RootDir holds pod directories, logs and etc-hosts files.
	RootDir string
	// PodLogsDir holds the containers' logs (/var/log/pods; default
	// <RootDir>/logs).
	PodLogsDir string
	// ClusterDNS is the cluster's DNS (--cluster-dns, --cluster-domain).
	ClusterDNS poddns.Cluster
	// ResolvConf is the node's resolv.conf for Default pods ("": none).
	ResolvConf string
	// CgroupRoot is the parent of the pods' cgroups ("": the runtime's).
	CgroupRoot string
	// StaticPodPath is the manifest directory ("" disables static pods).
	StaticPodPath string
	Capacity      resource.List
	Reserved      resource.List
	// KubeletPort is the logs/exec server's port the Node advertises.
	KubeletPort int32

	// Resync is how often a running pod is synced with no cause (10 s).
	Resync time.Duration
	// RelistPeriod is how often the runtime is relisted (1 s).
	RelistPeriod time.Duration
	// HousekeepingPeriod is how often orphans are cleaned up (2 s).
	HousekeepingPeriod time.Duration
	// StaticPodPeriod is how often the manifest directory is read (1 s).
	StaticPodPeriod time.Duration
	// NodeStatus times the lease and status updates.
	NodeStatus nodestatus.Config
	// StatusWorkers write pod statuses in parallel (4).
	StatusWorkers int
	// ParallelPodStarts bounds how many pods start (sandbox, network,
	// containers) at once (default: 2 per CPU; thirty pods at once on two
	// CPUs reach Running about twice as fast at the median this way).
	ParallelPodStarts int
	// CrashLoopMaxRestartPeriod caps CrashLoopBackOff (5 min); below
	// 10 s it is also the first delay, as Kubernetes'
	// crashLoopBackOff.maxContainerRestartPeriod.
	CrashLoopMaxRestartPeriod time.Duration
}

// Deps are the kubelet's outside dependencies.
type Deps struct {
	Conn    grpc.ClientConnInterface
	Runtime runtime.Runtime
	// Recorder defaults to pkg/client/record writing through Conn.
	Recorder events.Recorder
	Clock    clock.Clock
	Log      *slog.Logger
	// ProbeDialer dials for network probes (nil: the node's network).
	ProbeDialer func(ctx context.Context, network, addr string) (net.Conn, error)
	// Tokens issues the Pods' ServiceAccount tokens (nil: placeholders).
	Tokens volumes.Tokens
}

// Kubelet runs the pods bound to one node.
type Kubelet struct {
	cfg      Config
	conn     grpc.ClientConnInterface
	runtime  runtime.Runtime
	recorder events.Recorder
	clock    clock.Clock
	log      *slog.Logger
	tracer   trace.Tracer

	pods     *client.Client[*corev1.Pod]
	node     *nodestatus.Controller
	manager  *podManager
	workers  *podworkers.Workers
	kr       *kuberuntime.Manager
	probes   *probes.Manager
	status   *status.Manager
	volumes  *volumes.Manager
	informer cache.SharedIndexInformer
	// services feeds the containers' Service variables.
	services cache.SharedIndexInformer

	admitMu  sync.Mutex
	admitted map[string]*corev1.Pod
	rejected map[string]bool

	readyMu    sync.Mutex
	readySpans map[string]trace.Span

	sourcesReady chan struct{}
	staticReady  chan struct{}
	staticSeen   sync.Once
	record       *record.Recorder // the default recorder, shut down with Run

	startSlots chan struct{}

	plegMu      sync.Mutex
	pleg        map[string]string
	runtimePods map[string]runtime.PodRef
	relisted    bool
}

// New builds a kubelet; Run starts it.
func New(cfg Config, deps Deps) (*Kubelet, error) {
	if cfg.NodeName == "" {
		return nil, errors.New("kubelet: node name is required")
	}
	if deps.Conn == nil || deps.Runtime == nil {
		return nil, errors.New("kubelet: Conn and Runtime are required")
	}
	if deps.Clock == nil {
		deps.Clock = clock.Real{}
	}
	if deps.Log == nil {
		deps.Log = slog.Default()
	}
	def := func(d *time.Duration, v time.Duration) {
		if *d <= 0 {
			*d = v
		}
	}
	def(&cfg.Resync, 10*time.Second)
	def(&cfg.RelistPeriod, time.Second)
	def(&cfg.HousekeepingPeriod, 2*time.Second)
	def(&cfg.StaticPodPeriod, time.Second)
	if cfg.StatusWorkers <= 0 {
		cfg.StatusWorkers = 4
	}
	if cfg.ParallelPodStarts <= 0 {
		cfg.ParallelPodStarts = 2 * goruntime.NumCPU()
	}
	if cfg.RootDir == "" {
		cfg.RootDir = "/var/lib/kubelet"
	}
	kl := &Kubelet{
		cfg: cfg, conn: deps.Conn, runtime: deps.Runtime, recorder: deps.Recorder,
		clock: deps.Clock, log: deps.Log, tracer: otel.Tracer(kuberuntime.TracerName),
		pods: client.Pods(deps.Conn), manager: newPodManager(),
		admitted: map[string]*corev1.Pod{}, rejected: map[string]bool{}, readySpans: map[string]trace.Span{},
		sourcesReady: make(chan struct{}), staticReady: make(chan struct{}), pleg: map[string]string{},
		startSlots: make(chan struct{}, cfg.ParallelPodStarts),
	}
	if kl.recorder == nil {
		kl.record = record.NewRecorder(deps.Conn, events.Component, cfg.NodeName, record.WithClock(deps.Clock), record.WithLogger(deps.Log))
		kl.recorder = events.FromRecord{R: kl.record}
	}
	kl.volumes = volumes.NewManager(cfg.RootDir, apiSource{conn: deps.Conn}, deps.Tokens, deps.Log)
	kl.status = status.NewManager(kl.pods, kl, deps.Log)

	nsCfg := cfg.NodeStatus
	nsCfg.NodeName, nsCfg.Taints, nsCfg.PodCIDR, nsCfg.Labels = cfg.NodeName, cfg.Taints, cfg.PodCIDR, cfg.Labels
	nsCfg.Capacity, nsCfg.Reserved, nsCfg.KubeletPort = cfg.Capacity, cfg.Reserved, cfg.KubeletPort
	nsCfg.Addresses = nodeAddresses(cfg.NodeName, cfg.NodeIPs)
	kl.node = nodestatus.NewController(nsCfg, client.Nodes(deps.Conn), client.Leases(deps.Conn), nodestatus.Probes{
		Images:   deps.Runtime.ListImages,
		Signals:  func() nodestatus.Signals { return nodestatus.ReadSignals(cfg.RootDir) },
		NotReady: kl.notReady,
	}, deps.Clock, deps.Log)
	kl.node.OnPodCIDR(func(cidr string) {
		deps.Log.Info("pod CIDR", "cidr", cidr)
		ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
		defer cancel()
		if err := deps.Runtime.UpdatePodCIDR(ctx, cidr); err != nil {
			deps.Log.Warn("update runtime config", "podCIDR", cidr, "err", err)
		}
		kl.node.Kick()
	})
	return kl, nil
}

// notReady says why the node is not ready, in the kubelet's words.
func (kl *Kubelet) notReady(ctx context.Context) string {
	ctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	if _, _, err := kl.runtime.Version(ctx); err != nil {
		return fmt.Sprintf("container runtime is down: %v", err)
	}
	if err := kl.runtime.Status(ctx); err != nil {
		return err.Error()
	}
	return ""
}

// Node is the node controller (registration, status, lease).
func (kl *Kubelet) Node() *nodestatus.Controller { return kl.node }

// errServicesNotRead is the kubelet's refusal to start a container before
// it has read the Services once.
var errServicesNotRead = errors.New("services have not yet been read at least once, cannot construct envvars")

// ListServices lists every namespace's Services from the informer's cache.
func (kl *Kubelet) ListServices() ([]*corev1.Service, error) {
	if kl.services == nil || !kl.services.HasSynced() {
		return nil, errServicesNotRead
	}
	objs := kl.services.GetStore().List()
	out := make([]*corev1.Service, 0, len(objs))
	for _, o := range objs {
		out = append(out, o.(*corev1.Service))
	}
	return out, nil
}

// StatusManager writes pod statuses.
func (kl *Kubelet) StatusManager() *status.Manager { return kl.status }

// Workers are the pod workers.
func (kl *Kubelet) Workers() *podworkers.Workers { return kl.workers }

// Run runs the kubelet until ctx ends. Pods start at once: static pods
// run even while the apiserver cannot be reached, and the node registers
// (then keeps its lease and status) as soon as it can.
func (kl *Kubelet) Run(ctx context.Context) error {
	if kl.cfg.PodCIDR != "" {
		if err := kl.runtime.UpdatePodCIDR(ctx, kl.cfg.PodCIDR); err != nil {
			kl.log.Warn("update runtime config", "podCIDR", kl.cfg.PodCIDR, "err", err)
		}
	}
	kl.workers = podworkers.New(ctx, kl, kl.clock, kl.log, podworkers.Options{Resync: kl.cfg.Resync})
	kl.probes = probes.NewManager(ctx, &probes.Prober{Runtime: kl.runtime}, kl.status, kl.recorder, kl.clock, kl.log, kl.triggerFromProbe)
	crashMax := backoff.DefaultMax
	if kl.cfg.CrashLoopMaxRestartPeriod > 0 {
		crashMax = kl.cfg.CrashLoopMaxRestartPeriod
	}
	kl.kr = kuberuntime.NewManager(kuberuntime.Config{
		Runtime: kl.runtime, Recorder: kl.recorder, Probes: kl.probes,
		Source: apiSource{conn: kl.conn}, Services: kl, Clock: kl.clock, Log: kl.log, RootDir: kl.cfg.RootDir,
		PodLogsDir: kl.cfg.PodLogsDir, ClusterDNS: kl.cfg.ClusterDNS, ResolvConf: kl.cfg.ResolvConf, CgroupRoot: kl.cfg.CgroupRoot,
		CrashBackoff: backoff.New(kl.clock, min(backoff.DefaultInitial, crashMax), crashMax),
	})

	if kl.record != nil {
		defer kl.record.Shutdown() // last: after everything that records
	}
	var wg sync.WaitGroup
	defer wg.Wait()
	wg.Go(func() {
		if err := kl.node.Register(ctx); err != nil {
			return
		}
		// Mirror pods wait for the Node they belong to.
		for _, p := range kl.manager.staticPods() {
			kl.workers.Trigger(p.GetMetadata().GetUid())
		}
		kl.node.Run(ctx)
	})
	wg.Go(func() { kl.status.Run(ctx, kl.cfg.StatusWorkers, kl.cfg.Resync) })

	kl.services = cache.NewSharedIndexInformer(&client.ListWatch[*corev1.Service]{Client: client.Services(kl.conn)},
		&corev1.Service{}, cache.WithInformerLogger(kl.log))
	lw := &client.ListWatch[*corev1.Pod]{Client: kl.pods, FieldSelector: "spec.nodeName=" + kl.cfg.NodeName}
	kl.informer = cache.NewSharedIndexInformer(lw, &corev1.Pod{}, cache.WithInformerLogger(kl.log))
	if _, err := kl.informer.AddEventHandler(cache.ResourceEventHandlerFuncs{
		AddFunc:    func(o object.Object) { kl.handleAPIPod(o.(*corev1.Pod), false) },
		UpdateFunc: func(_, o object.Object) { kl.handleAPIPod(o.(*corev1.Pod), false) },
		DeleteFunc: func(o object.Object) {
			if p, ok := cache.As[*corev1.Pod](o); ok {
				kl.handleAPIPod(p, true)
			}
		},
	}); err != nil {
		return err
	}
	wg.Go(func() { kl.services.Run(ctx) })
	// Pods from the API start once the Services were read, so their
	// containers get their Service variables at the first try (the
	// kubelet's apiserver pod source waits for them likewise).
	wg.Go(func() {
		if cache.WaitForCacheSync(ctx, kl.services.HasSynced) {
			kl.informer.Run(ctx)
		}
	})

	if kl.cfg.StaticPodPath != "" {
		src := &staticpods.Source{Dir: kl.cfg.StaticPodPath, NodeName: kl.cfg.NodeName, Period: kl.cfg.StaticPodPeriod, Clock: kl.clock, Log: kl.log}
		wg.Go(func() { src.Run(ctx, kl.handleStaticPods) })
	} else {
		kl.staticSeen.Do(func() { close(kl.staticReady) })
	}
	wg.Go(func() {
		if !cache.WaitForCacheSync(ctx, kl.informer.HasSynced) {
			return
		}
		close(kl.sourcesReady)
	})
	wg.Go(func() { kl.plegLoop(ctx) })
	wg.Go(func() { kl.housekeepingLoop(ctx) })
	kl.log.Info("kubelet running", "node", kl.cfg.NodeName)
	<-ctx.Done()
	kl.workers.Wait()
	return nil
}

// APIPod is the apiserver object a pod's status goes to (status.APIPods).
func (kl *Kubelet) APIPod(uid string) *corev1.Pod {
	p, ok := kl.manager.get(uid)
	if !ok {
		return nil
	}
	if kl.manager.isStatic(uid) {
		m := kl.manager.mirror(object.Key(p))
		if m == nil || staticpods.MirrorHash(m) != uid {
			return nil
		}
		return m
	}
	return p
}

func (kl *Kubelet) triggerFromProbe(uid string) {
	if kl.workers != nil {
		kl.workers.Trigger(uid)
	}
}

// Pod finds a pod the kubelet runs by namespace and name.
func (kl *Kubelet) Pod(namespace, name string) (*corev1.Pod, bool) {
	return kl.manager.byName(namespace, name)
}

// Runtime is the container runtime.
func (kl *Kubelet) Runtime() runtime.Runtime { return kl.runtime }
