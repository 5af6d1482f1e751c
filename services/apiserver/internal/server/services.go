package server

import (
	"context"
	"fmt"
	"log/slog"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	"podline.dev/services/apiserver/internal/allocator"
	"podline.dev/services/apiserver/internal/kubesvc"
	"podline.dev/services/apiserver/internal/servicealloc"
)

// serviceParts are the Service allocators, their repair, and the
// kubernetes Service's reconciler configuration.
type serviceParts struct {
	cfg    ServicesConfig
	ipRng  *allocator.IPRange
	alloc  *servicealloc.Allocators
	leases kubesvc.Leases
}

func newServiceParts(cfg Config) (*serviceParts, error) {
	sc := cfg.Services
	if sc.ClusterIPRange == "" {
		sc.ClusterIPRange = DefaultServiceClusterIPRange
	}
	if sc.NodePortRange == "" {
		sc.NodePortRange = DefaultServiceNodePortRange
	}
	if sc.SecurePort == 0 {
		sc.SecurePort = 6443
	}
	ipRng, err := allocator.ParseIPRange(sc.ClusterIPRange)
	if err != nil {
		return nil, err
	}
	portRng, err := allocator.ParsePortRange(sc.NodePortRange)
	if err != nil {
		return nil, err
	}
	store := allocator.NewEtcdStore(cfg.Etcd, cfg.EtcdTimeout)
	log := slog.Default().With("component", "service-allocation")
	return &serviceParts{
		cfg:   sc,
		ipRng: ipRng,
		alloc: servicealloc.New(
			allocator.New(ipRng, allocator.KeyServiceIPs, store),
			allocator.New(portRng, allocator.KeyServiceNodePorts, store), log),
		leases: kubesvc.NewEtcdLeases(cfg.Etcd),
	}, nil
}

// ServiceAllocators are the server's Service IP and port allocators, for
// tests that look inside.
func (s *Server) ServiceAllocators() *servicealloc.Allocators { return s.services.alloc }

// ServiceRepair returns a repair of the Service ranges over the stored
// Services, for tests that run one at a time.
func (s *Server) ServiceRepair(leakRepairs int) *servicealloc.Repair {
	return servicealloc.NewRepair(s.services.alloc, s.listServices, leakRepairs, nil)
}

// listServices reads every Service from etcd.
func (s *Server) listServices(ctx context.Context) ([]*corev1.Service, error) {
	items, _, err := s.registries["services"].List(ctx, &metav1.ListRequest{})
	if err != nil {
		return nil, err
	}
	out := make([]*corev1.Service, 0, len(items))
	for _, o := range items {
		out = append(out, o.(*corev1.Service))
	}
	return out, nil
}

// runServices repairs the ranges once (a crash may have leaked or lost
// allocations), keeps repairing every few minutes, and starts the
// kubernetes Service reconciler, whose first pass is done on return.
func (s *Server) runServices(ctx context.Context) error {
	sp := s.services
	repair := servicealloc.NewRepair(sp.alloc, s.listServices, sp.cfg.LeakRepairs, slog.Default().With("component", "service-allocation-repair"))
	if err := repair.RunOnce(ctx); err != nil {
		return fmt.Errorf("service allocation repair: %w", err)
	}
	go repair.Run(ctx, sp.cfg.RepairInterval)
	if sp.cfg.DisableKubernetesService {
		return nil
	}
	addr := sp.cfg.AdvertiseAddress
	if addr == "" {
		var err error
		if addr, err = kubesvc.HostAddress(); err != nil {
			return err
		}
	}
	rec := kubesvc.New(kubesvc.Config{
		ServiceIP: sp.ipRng.First(), Address: addr, SecurePort: sp.cfg.SecurePort,
		Interval: sp.cfg.EndpointInterval, LeaseTTL: sp.cfg.LeaseTTL,
	}, s.registries["services"], s.registries["endpoints"], s.registries["endpointslices.discovery.k8s.io"], sp.leases,
		slog.Default().With("component", "kubernetes-service"))
	if err := rec.Reconcile(ctx); err != nil {
		slog.Warn("kubernetes service: first reconcile failed; retrying", "err", err)
	}
	go rec.Run(ctx)
	return nil
}
