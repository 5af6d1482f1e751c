package servicealloc

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strconv"

	"podline.dev/pkg/apierrors"
	"podline.dev/pkg/field"
	"podline.dev/pkg/object"
	corev1 "podline.dev/proto/core/v1"
	"podline.dev/services/apiserver/internal/allocator"
	"podline.dev/services/apiserver/internal/registry"
)

// Allocators hands out one cluster's Service IPs and node ports.
type Allocators struct {
	IPs, Ports *allocator.Allocator
	log        *slog.Logger
}

var _ registry.Allocation = (*Allocators)(nil)

// New returns the allocators of the two ranges.
func New(ips, ports *allocator.Allocator, log *slog.Logger) *Allocators {
	if log == nil {
		log = slog.Default()
	}
	return &Allocators{IPs: ips, Ports: ports, log: log}
}

var serviceKind = apierrors.GroupKind{Kind: "Service"}

const (
	familyIPv4        = "IPv4"
	familyIPv6        = "IPv6"
	policySingle      = "SingleStack"
	policyRequireDual = "RequireDualStack"
)

func isHeadless(s *corev1.ServiceSpec) bool {
	return s.GetClusterIp() == "None" || (len(s.GetClusterIps()) > 0 && s.GetClusterIps()[0] == "None")
}

func needsClusterIP(s *corev1.ServiceSpec) bool { return s.GetType() != "ExternalName" }

func needsNodePorts(s *corev1.ServiceSpec) bool {
	return s.GetType() == "NodePort" || s.GetType() == "LoadBalancer"
}

func needsHealthCheck(s *corev1.ServiceSpec) bool {
	return s.GetType() == "LoadBalancer" && s.GetExternalTrafficPolicy() == "Local"
}

// shouldAllocateNodePorts: a LoadBalancer may opt out of node ports.
func shouldAllocateNodePorts(s *corev1.ServiceSpec) bool {
	return s.GetType() == "NodePort" || s.AllocateLoadBalancerNodePorts == nil || s.GetAllocateLoadBalancerNodePorts()
}

// initIPFamilies defaults ipFamilyPolicy and ipFamilies for this
// single-stack IPv4 cluster and refuses families it does not have, as
// kube-apiserver does before allocating. old is nil on create.
func initIPFamilies(svc, old *corev1.Service) error {
	s := svc.Spec
	if !needsClusterIP(s) {
		return nil
	}
	if s.IpFamilyPolicy == nil {
		switch {
		case old != nil && old.GetSpec().IpFamilyPolicy != nil:
			p := old.Spec.GetIpFamilyPolicy()
			s.IpFamilyPolicy = &p
		case isHeadless(s) && len(s.Selector) == 0:
			p := policyRequireDual
			s.IpFamilyPolicy = &p
		default:
			p := policySingle
			s.IpFamilyPolicy = &p
		}
	}
	var errs field.ErrorList
	for i, ip := range s.ClusterIps {
		if ip == "None" {
			break
		}
		if i < len(s.IpFamilies) {
			continue
		}
		if !isIPv4(ip) {
			errs = append(errs, field.Invalid(field.NewPath("spec", "clusterIPs").Index(i), s.ClusterIps, familyIPv6+" is not configured on this cluster"))
			continue
		}
		s.IpFamilies = append(s.IpFamilies, familyIPv4)
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(serviceKind, svc.GetMetadata().GetName(), errs)
	}
	if isHeadless(s) && len(s.Selector) == 0 {
		// Headless without a selector may name both families even here.
		if len(s.IpFamilies) == 0 {
			s.IpFamilies = []string{familyIPv4}
		}
		if len(s.IpFamilies) < 2 && s.GetIpFamilyPolicy() != policySingle {
			if s.IpFamilies[0] == familyIPv4 {
				s.IpFamilies = append(s.IpFamilies, familyIPv6)
			} else {
				s.IpFamilies = append(s.IpFamilies, familyIPv4)
			}
		}
		return nil
	}
	if s.GetIpFamilyPolicy() == policyRequireDual {
		errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilyPolicy"), s.GetIpFamilyPolicy(), "this cluster is not configured for dual-stack services"))
	}
	for i, f := range s.IpFamilies {
		if f != familyIPv4 {
			errs = append(errs, field.Invalid(field.NewPath("spec", "ipFamilies").Index(i), f, "not configured on this cluster"))
		}
	}
	if len(errs) > 0 {
		return apierrors.NewInvalid(serviceKind, svc.GetMetadata().GetName(), errs)
	}
	if len(s.IpFamilies) == 0 {
		s.IpFamilies = []string{familyIPv4}
	}
	return nil
}

func isIPv4(ip string) bool {
	for i := 0; i < len(ip); i++ {
		if ip[i] == ':' {
			return false
		}
	}
	return true
}

// change is what one write took and would give back.
type change struct {
	ips, ports               []string // taken for the new object
	releaseIPs, releasePorts []string // held by the old object, freed once stored
}

// BeginCreate implements registry.Allocation.
func (al *Allocators) BeginCreate(ctx context.Context, obj object.Object, dryRun bool) (func(context.Context, bool), error) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return nil, fmt.Errorf("servicealloc: %T is not a Service", obj)
	}
	if svc.Spec == nil {
		svc.Spec = &corev1.ServiceSpec{}
	}
	if err := initIPFamilies(svc, nil); err != nil {
		return nil, err
	}
	var c change
	if needsClusterIP(svc.Spec) && !isHeadless(svc.Spec) {
		if err := al.allocClusterIP(ctx, svc, &c, dryRun); err != nil {
			return nil, err
		}
	}
	if needsNodePorts(svc.Spec) || needsHealthCheck(svc.Spec) {
		if err := al.allocNodePorts(ctx, svc, nil, &c, dryRun); err != nil {
			al.undo(ctx, svc, c, dryRun)
			return nil, err
		}
	}
	return al.finish(svc, c, dryRun), nil
}

// BeginUpdate implements registry.Allocation.
func (al *Allocators) BeginUpdate(ctx context.Context, obj, oldObj object.Object, dryRun bool) (func(context.Context, bool), error) {
	svc, ok1 := obj.(*corev1.Service)
	old, ok2 := oldObj.(*corev1.Service)
	if !ok1 || !ok2 {
		return nil, fmt.Errorf("servicealloc: %T is not a Service", obj)
	}
	if svc.Spec == nil {
		svc.Spec = &corev1.ServiceSpec{}
	}
	if err := initIPFamilies(svc, old); err != nil {
		return nil, err
	}
	var c change
	s, o := svc.Spec, old.GetSpec()
	switch {
	case !needsClusterIP(o) && needsClusterIP(s) && !isHeadless(s):
		// ExternalName to a type with a ClusterIP: allocate one.
		if err := al.allocClusterIP(ctx, svc, &c, dryRun); err != nil {
			return nil, err
		}
	case needsClusterIP(o) && !isHeadless(o) && !needsClusterIP(s):
		// To ExternalName: the old ClusterIP goes once the update is stored.
		c.releaseIPs = clusterIPsOf(old)
	}
	if err := al.allocNodePorts(ctx, svc, old, &c, dryRun); err != nil {
		al.undo(ctx, svc, c, dryRun)
		return nil, err
	}
	return al.finish(svc, c, dryRun), nil
}

// Release implements registry.Allocation.
func (al *Allocators) Release(ctx context.Context, obj object.Object) {
	svc, ok := obj.(*corev1.Service)
	if !ok {
		return
	}
	key := object.KeyOf(svc.GetMetadata().GetNamespace(), svc.GetMetadata().GetName())
	if err := al.IPs.Release(ctx, clusterIPsOf(svc)...); err != nil {
		al.log.Error("releasing the ClusterIP of a deleted Service failed; the repair loop frees it", "service", key, "err", err)
	}
	if err := al.Ports.Release(ctx, nodePortsOf(svc)...); err != nil {
		al.log.Error("releasing the node ports of a deleted Service failed; the repair loop frees them", "service", key, "err", err)
	}
}

// finish returns the registry's finish callback for c.
func (al *Allocators) finish(svc *corev1.Service, c change, dryRun bool) func(context.Context, bool) {
	return func(ctx context.Context, stored bool) {
		if dryRun {
			return
		}
		key := object.KeyOf(svc.GetMetadata().GetNamespace(), svc.GetMetadata().GetName())
		if !stored {
			al.undo(ctx, svc, c, dryRun)
			return
		}
		if len(c.ips) > 0 || len(c.ports) > 0 {
			al.log.Info("allocated", "service", key, "clusterIPs", c.ips, "nodePorts", c.ports)
		}
		if err := al.IPs.Release(ctx, c.releaseIPs...); err != nil {
			al.log.Error("releasing a ClusterIP after an update failed; the repair loop frees it", "service", key, "err", err)
		}
		if err := al.Ports.Release(ctx, c.releasePorts...); err != nil {
			al.log.Error("releasing node ports after an update failed; the repair loop frees them", "service", key, "err", err)
		}
	}
}

// undo gives back what c took for a write that was not stored.
func (al *Allocators) undo(ctx context.Context, svc *corev1.Service, c change, dryRun bool) {
	if dryRun {
		return
	}
	key := object.KeyOf(svc.GetMetadata().GetNamespace(), svc.GetMetadata().GetName())
	if err := al.IPs.Release(ctx, c.ips...); err != nil {
		al.log.Error("releasing the ClusterIP of a failed write failed; the repair loop frees it", "service", key, "err", err)
	}
	if err := al.Ports.Release(ctx, c.ports...); err != nil {
		al.log.Error("releasing the node ports of a failed write failed; the repair loop frees them", "service", key, "err", err)
	}
}

// allocClusterIP takes the requested clusterIP, or any, and fills in
// clusterIP and clusterIPs.
func (al *Allocators) allocClusterIP(ctx context.Context, svc *corev1.Service, c *change, dryRun bool) error {
	s := svc.Spec
	want := ""
	if len(s.ClusterIps) > 0 {
		want = s.ClusterIps[0]
	}
	var got string
	err := al.IPs.Update(ctx, dryRun, func(t *allocator.Txn) error {
		if want == "" {
			v, err := t.Next()
			got = v
			return err
		}
		got = want
		return t.Allocate(want)
	})
	if err != nil {
		if isStoreError(err) {
			return storeError(err)
		}
		if want == "" {
			return apierrors.NewInternalError(fmt.Errorf("failed to allocate a serviceIP: %v", err))
		}
		return apierrors.NewInvalid(serviceKind, svc.GetMetadata().GetName(), field.ErrorList{
			field.Invalid(field.NewPath("spec", "clusterIPs"), s.ClusterIps, fmt.Sprintf("failed to allocate IP %s: %v", want, err)),
		})
	}
	s.ClusterIp = got
	if len(s.ClusterIps) == 0 {
		s.ClusterIps = []string{got}
	} else {
		s.ClusterIps[0] = got
	}
	c.ips = append(c.ips, got)
	return nil
}

// isAllocationError: the request's fault (taken, out of range, unparsable,
// a full range), not the store's.
func isAllocationError(err error) bool { return !isStoreError(err) }

func isStoreError(err error) bool {
	var se *allocator.StoreError
	return errors.As(err, &se) || errors.Is(err, context.DeadlineExceeded) || errors.Is(err, context.Canceled)
}

func storeError(err error) error {
	return apierrors.NewServiceUnavailable(fmt.Sprintf("etcd is unavailable: %v", err))
}

// allocNodePorts takes the node ports svc needs, reusing old's (nil on
// create), and records in c the ports old held that svc no longer does.
func (al *Allocators) allocNodePorts(ctx context.Context, svc, old *corev1.Service, c *change, dryRun bool) error {
	s := svc.Spec
	held := map[int32]bool{}
	for _, p := range nodePortsOf(old) {
		n, _ := strconv.Atoi(p)
		held[int32(n)] = true
	}
	var fieldErr *field.Error
	var taken []string
	err := al.Ports.Update(ctx, dryRun, func(t *allocator.Txn) error {
		taken, fieldErr = nil, nil
		ours := map[int32]bool{} // taken by this write
		take := func(n int32) error {
			if held[n] || ours[n] {
				return nil
			}
			if err := t.Allocate(strconv.Itoa(int(n))); err != nil {
				return err
			}
			ours[n] = true
			taken = append(taken, strconv.Itoa(int(n)))
			return nil
		}
		next := func() (int32, error) {
			v, err := t.Next()
			if err != nil {
				return 0, err
			}
			n, _ := strconv.Atoi(v)
			ours[int32(n)] = true
			taken = append(taken, v)
			return int32(n), nil
		}
		if needsNodePorts(s) {
			byPort := map[int32]int32{} // service port → its node port (TCP and UDP 53 share one)
			for i, p := range s.Ports {
				if p.NodePort == 0 && !shouldAllocateNodePorts(s) {
					continue
				}
				if p.NodePort == 0 {
					if n := byPort[p.Port]; n != 0 {
						p.NodePort = n
						continue
					}
					if n := requestedNodePort(s.Ports, p.Port); n != 0 {
						p.NodePort = n
					}
				}
				if p.NodePort != 0 {
					if err := take(p.NodePort); err != nil {
						if isAllocationError(err) {
							fieldErr = field.Invalid(field.NewPath("spec", "ports").Index(i).Child("nodePort"), p.NodePort, err.Error())
						}
						return err
					}
				} else {
					n, err := next()
					if err != nil {
						return fmt.Errorf("failed to allocate a nodePort: %w", err)
					}
					p.NodePort = n
				}
				if byPort[p.Port] == 0 {
					byPort[p.Port] = p.NodePort
				}
			}
		}
		if needsHealthCheck(s) {
			if n := s.HealthCheckNodePort; n != 0 {
				if err := take(n); err != nil {
					return fmt.Errorf("failed to allocate requested HealthCheck NodePort %d: %w", n, err)
				}
			} else {
				n, err := next()
				if err != nil {
					return fmt.Errorf("failed to allocate a HealthCheck NodePort: %w", err)
				}
				s.HealthCheckNodePort = n
			}
		} else {
			s.HealthCheckNodePort = 0
		}
		return nil
	})
	if err != nil {
		switch {
		case fieldErr != nil:
			return apierrors.NewInvalid(serviceKind, svc.GetMetadata().GetName(), field.ErrorList{fieldErr})
		case isStoreError(err):
			return storeError(err)
		}
		return apierrors.NewInternalError(err)
	}
	c.ports = taken
	now := map[string]bool{}
	for _, p := range nodePortsOf(svc) {
		now[p] = true
	}
	for _, p := range nodePortsOf(old) {
		if !now[p] {
			c.releasePorts = append(c.releasePorts, p)
		}
	}
	return nil
}

// requestedNodePort is the node port a later entry of ports asks for the
// same service port, so that both protocols of one port share it.
func requestedNodePort(ports []*corev1.ServicePort, port int32) int32 {
	for _, p := range ports {
		if p.Port == port && p.NodePort != 0 {
			return p.NodePort
		}
	}
	return 0
}

// clusterIPsOf is what svc holds in the IP range.
func clusterIPsOf(svc *corev1.Service) []string {
	s := svc.GetSpec()
	if s == nil || !needsClusterIP(s) || isHeadless(s) {
		return nil
	}
	var out []string
	for i, ip := range s.GetClusterIps() {
		if i < len(s.GetIpFamilies()) && s.GetIpFamilies()[i] != familyIPv4 {
			continue
		}
		if ip != "" && isIPv4(ip) {
			out = append(out, ip)
		}
	}
	if len(out) == 0 && s.GetClusterIp() != "" && s.GetClusterIp() != "None" {
		out = []string{s.GetClusterIp()}
	}
	return out
}

// nodePortsOf is what svc holds in the node port range (nil svc: none).
func nodePortsOf(svc *corev1.Service) []string {
	s := svc.GetSpec()
	if s == nil {
		return nil
	}
	seen := map[int32]bool{}
	var out []string
	for _, p := range s.GetPorts() {
		if n := p.GetNodePort(); n != 0 && !seen[n] {
			seen[n] = true
			out = append(out, strconv.Itoa(int(n)))
		}
	}
	if n := s.GetHealthCheckNodePort(); n != 0 && needsHealthCheck(s) && !seen[n] {
		out = append(out, strconv.Itoa(int(n)))
	}
	return out
}
