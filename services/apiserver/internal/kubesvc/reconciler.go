package kubesvc

import (
	"context"
	"log/slog"
	"net"
	"slices"
	"time"

	"google.golang.org/protobuf/proto"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/object"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	discoveryv1 "podline.dev/proto/discovery/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// Name and Namespace of the Service, its Endpoints and its EndpointSlice.
const (
	Name      = "kubernetes"
	Namespace = "default"
	// PortName and Port are the Service's port.
	PortName = "https"
	Port     = 443
	// LabelServiceName ties the EndpointSlice to the Service.
	LabelServiceName = "kubernetes.io/service-name"
)

// Defaults of kube-apiserver's lease reconciler.
const (
	DefaultInterval = 10 * time.Second
	DefaultLeaseTTL = 15 * time.Second
)

// Objects is the registry of one resource, as the reconciler uses it.
type Objects interface {
	Get(ctx context.Context, namespace, name string) (object.Object, error)
	Create(ctx context.Context, namespace string, obj object.Object, dryRun bool) (object.Object, error)
	Update(ctx context.Context, namespace, name string, obj object.Object, dryRun bool) (object.Object, error)
	Watch(ctx context.Context, opts *metav1.ListRequest) (watch.Interface, error)
}

// Config is what the reconciler writes.
type Config struct {
	// ServiceIP is the Service's ClusterIP (the first IP of the range).
	ServiceIP string
	// Address is this apiserver's advertise address; SecurePort its port.
	Address    string
	SecurePort int32
	// Interval between reconciles and LeaseTTL of the address (defaults above).
	Interval, LeaseTTL time.Duration
}

// Reconciler keeps the kubernetes Service, Endpoints and EndpointSlice.
type Reconciler struct {
	cfg                      Config
	services, endpoints, eps Objects
	leases                   Leases
	log                      *slog.Logger
}

// New returns a reconciler over the registries of services, endpoints and
// endpointslices.
func New(cfg Config, services, endpoints, slices Objects, leases Leases, log *slog.Logger) *Reconciler {
	if cfg.Interval <= 0 {
		cfg.Interval = DefaultInterval
	}
	if cfg.LeaseTTL <= 0 {
		cfg.LeaseTTL = DefaultLeaseTTL
	}
	if log == nil {
		log = slog.Default()
	}
	return &Reconciler{cfg: cfg, services: services, endpoints: endpoints, eps: slices, leases: leases, log: log}
}

// Run reconciles at once, every Interval, and whenever one of the three
// objects changes, until ctx ends. A stopped apiserver's address leaves
// the endpoints when its lease expires.
func (r *Reconciler) Run(ctx context.Context) {
	kick := make(chan struct{}, 1)
	for _, o := range []Objects{r.services, r.endpoints, r.eps} {
		go r.watch(ctx, o, kick)
	}
	for {
		wait := r.cfg.Interval
		if err := r.Reconcile(ctx); err != nil && ctx.Err() == nil {
			// A Service deleted a moment ago may still hold its ClusterIP
			// (released just after the etcd delete): try again soon.
			r.log.Warn("reconciling the kubernetes service failed; retrying", "err", err)
			wait = retryDelay
		}
		select {
		case <-ctx.Done():
			return
		case <-time.After(wait):
		case <-kick:
		}
	}
}

// retryDelay is the wait after a failed reconcile.
const retryDelay = 250 * time.Millisecond

// watch kicks the loop on every change of the object named kubernetes in
// default, re-watching when the stream ends.
func (r *Reconciler) watch(ctx context.Context, o Objects, kick chan<- struct{}) {
	opts := &metav1.ListRequest{Namespace: Namespace, FieldSelector: "metadata.name=" + Name, ResourceVersion: "0"}
	for ctx.Err() == nil {
		w, err := o.Watch(ctx, opts)
		if err != nil {
			select {
			case <-ctx.Done():
			case <-time.After(time.Second):
			}
			continue
		}
		for ev := range w.ResultChan() {
			if ev.Type == watch.Deleted || ev.Type == watch.Modified {
				select {
				case kick <- struct{}{}:
				default:
				}
			}
		}
		w.Stop()
	}
}

// Reconcile makes the three objects what they should be once.
func (r *Reconciler) Reconcile(ctx context.Context) error {
	if err := r.reconcileService(ctx); err != nil {
		return err
	}
	if err := r.leases.Renew(ctx, r.cfg.Address, r.cfg.LeaseTTL); err != nil {
		return err
	}
	live, err := r.leases.Live(ctx)
	if err != nil {
		return err
	}
	if !slices.Contains(live, r.cfg.Address) {
		live = append(live, r.cfg.Address)
		slices.Sort(live)
	}
	return r.reconcileEndpoints(ctx, live)
}

func (r *Reconciler) reconcileEndpoints(ctx context.Context, live []string) error {
	if err := r.ensure(ctx, r.endpoints, r.wantEndpoints(live), sameEndpoints); err != nil {
		return err
	}
	return r.ensure(ctx, r.eps, r.wantSlice(live), sameSlice)
}

func (r *Reconciler) reconcileService(ctx context.Context) error {
	return r.ensure(ctx, r.services, r.wantService(), sameService)
}

// ensure creates want, or updates the stored object to it when same says
// they differ. A concurrent writer (another apiserver) is retried next time.
func (r *Reconciler) ensure(ctx context.Context, o Objects, want object.Object, same func(cur, want object.Object) bool) error {
	cur, err := o.Get(ctx, Namespace, Name)
	if apierrors.IsNotFound(err) {
		_, err = o.Create(ctx, Namespace, want, false)
		if apierrors.IsAlreadyExists(err) {
			return nil
		}
		if err == nil {
			r.log.Info("created", "kind", kindOf(want), "object", Namespace+"/"+Name)
		}
		return err
	}
	if err != nil {
		return err
	}
	if same(cur, want) {
		return nil
	}
	next := object.Copy(cur)
	merge(next, want)
	_, err = o.Update(ctx, Namespace, Name, next, false)
	if apierrors.IsConflict(err) {
		return nil
	}
	return err
}

func kindOf(o object.Object) string {
	switch o.(type) {
	case *corev1.Service:
		return "Service"
	case *corev1.Endpoints:
		return "Endpoints"
	}
	return "EndpointSlice"
}

// merge puts want's content into next, keeping next's metadata (its
// resourceVersion is the update's precondition) with want's labels.
func merge(next, want object.Object) {
	md := next.GetMetadata()
	for k, v := range want.GetMetadata().GetLabels() {
		if md.Labels == nil {
			md.Labels = map[string]string{}
		}
		md.Labels[k] = v
	}
	switch n := next.(type) {
	case *corev1.Service:
		w := want.(*corev1.Service)
		n.Spec.Ports = w.Spec.Ports
		n.Spec.Type = w.Spec.Type
	case *corev1.Endpoints:
		n.Subsets = want.(*corev1.Endpoints).Subsets
	case *discoveryv1.EndpointSlice:
		w := want.(*discoveryv1.EndpointSlice)
		n.AddressType, n.Endpoints, n.Ports = w.AddressType, w.Endpoints, w.Ports
	}
}

func (r *Reconciler) wantService() *corev1.Service {
	return &corev1.Service{
		Metadata: &metav1.ObjectMeta{Name: Name, Namespace: Namespace,
			Labels: map[string]string{"component": "apiserver", "provider": "kubernetes"}},
		Spec: &corev1.ServiceSpec{
			Type:            "ClusterIP",
			ClusterIp:       r.cfg.ServiceIP,
			ClusterIps:      []string{r.cfg.ServiceIP},
			SessionAffinity: "None",
			Ports: []*corev1.ServicePort{{Name: PortName, Protocol: "TCP", Port: Port,
				TargetPort: &metav1.IntOrString{IntVal: r.cfg.SecurePort}}},
		},
	}
}

func (r *Reconciler) wantEndpoints(live []string) *corev1.Endpoints {
	addrs := make([]*corev1.EndpointAddress, len(live))
	for i, a := range live {
		addrs[i] = &corev1.EndpointAddress{Ip: a}
	}
	return &corev1.Endpoints{
		Metadata: &metav1.ObjectMeta{Name: Name, Namespace: Namespace},
		Subsets: []*corev1.EndpointSubset{{Addresses: addrs,
			Ports: []*corev1.EndpointPort{{Name: PortName, Port: r.cfg.SecurePort, Protocol: "TCP"}}}},
	}
}

func (r *Reconciler) wantSlice(live []string) *discoveryv1.EndpointSlice {
	eps := make([]*discoveryv1.Endpoint, len(live))
	for i, a := range live {
		eps[i] = &discoveryv1.Endpoint{Addresses: []string{a}, Conditions: &discoveryv1.EndpointConditions{Ready: proto.Bool(true)}}
	}
	return &discoveryv1.EndpointSlice{
		Metadata:    &metav1.ObjectMeta{Name: Name, Namespace: Namespace, Labels: map[string]string{LabelServiceName: Name}},
		AddressType: "IPv4",
		Endpoints:   eps,
		Ports: []*discoveryv1.EndpointPort{{Name: proto.String(PortName), Protocol: proto.String("TCP"),
			Port: proto.Int32(r.cfg.SecurePort)}},
	}
}

// sameService: the stored Service has the ports and type kube-apiserver
// keeps (its ClusterIP is immutable; a changed one is left alone).
func sameService(cur, want object.Object) bool {
	c, w := cur.(*corev1.Service), want.(*corev1.Service)
	if c.GetSpec().GetType() != w.Spec.Type || len(c.GetSpec().GetPorts()) != len(w.Spec.Ports) {
		return false
	}
	for i, p := range w.Spec.Ports {
		cp := c.Spec.Ports[i]
		if cp.GetName() != p.Name || cp.GetPort() != p.Port || cp.GetProtocol() != p.Protocol || !proto.Equal(cp.GetTargetPort(), p.TargetPort) {
			return false
		}
	}
	return true
}

func sameEndpoints(cur, want object.Object) bool {
	return slices.EqualFunc(cur.(*corev1.Endpoints).GetSubsets(), want.(*corev1.Endpoints).GetSubsets(),
		func(a, b *corev1.EndpointSubset) bool { return proto.Equal(a, b) })
}

func sameSlice(cur, want object.Object) bool {
	c, w := cur.(*discoveryv1.EndpointSlice), want.(*discoveryv1.EndpointSlice)
	if c.GetAddressType() != w.AddressType || c.GetMetadata().GetLabels()[LabelServiceName] != Name {
		return false
	}
	return slices.EqualFunc(c.GetEndpoints(), w.Endpoints, func(a, b *discoveryv1.Endpoint) bool { return proto.Equal(a, b) }) &&
		slices.EqualFunc(c.GetPorts(), w.Ports, func(a, b *discoveryv1.EndpointPort) bool { return proto.Equal(a, b) })
}

// HostAddress is the first non-loopback IPv4 address of the host, the
// default of --advertise-address.
func HostAddress() (string, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "", err
	}
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok && !n.IP.IsLoopback() && n.IP.To4() != nil && !n.IP.IsLinkLocalUnicast() {
			return n.IP.String(), nil
		}
	}
	return "", ErrNoAdvertiseAddress
}
