package rules

import (
	"fmt"
	"net/netip"
	"slices"
	"strconv"
	"strings"
	"time"
)

// Chain is a chain the proxy writes, with its rules in order. Base chains
// carry their hook.
type Chain struct {
	Name  string
	Rules []string
	// Hook, Type and Priority are set for base chains only.
	Hook, Type, Priority string
}

// Set is a set the proxy owns. Dynamic sets (ClientIP affinity) are
// filled by the packet path and never flushed by a sync.
type Set struct {
	Name    string
	Type    string
	Dynamic bool
	Timeout time.Duration
}

// Map is a verdict map the proxy owns.
type Map struct {
	Name string
	Type string
}

// Element is one element of a base set or map; Map is "" for a set
// element.
type Element struct {
	Set, Map string
	Key      []string
	Value    string
	Comment  string
}

func (e Element) id() string {
	return e.Set + "|" + e.Map + "|" + strings.Join(e.Key, " . ")
}

// Fragment is what one owner (the base, or one Service) contributes to the
// table: chains, sets, maps, and elements of the base sets and maps.
type Fragment struct {
	Chains   []Chain
	Sets     []Set
	Maps     []Map
	Elements []Element
}

// Ruleset is the whole desired table: the base fragment and one fragment
// per Service (by namespace/name) that has rules.
type Ruleset struct {
	Base     Fragment
	Services map[string]Fragment
}

// Build is the whole Ruleset for services on a node: a pure function of
// its inputs.
func Build(node NodeInfo, services []*Service) (*Ruleset, error) {
	base, err := BuildBase(node)
	if err != nil {
		return nil, err
	}
	rs := &Ruleset{Base: base, Services: make(map[string]Fragment, len(services))}
	for _, svc := range services {
		f, err := BuildService(node, svc)
		if err != nil {
			return nil, fmt.Errorf("service %s: %w", svc.Key(), err)
		}
		if f != nil {
			rs.Services[svc.Key()] = *f
		}
	}
	return rs, nil
}

func ipv4(s string) error {
	a, err := netip.ParseAddr(s)
	if err != nil || !a.Is4() {
		return fmt.Errorf("%q: %w", s, ErrNotIPv4)
	}
	return nil
}

// BuildBase is the table's fixed part: the hooked chains, the dispatch
// chains and the maps and sets the Services fill.
func BuildBase(node NodeInfo) (Fragment, error) {
	if node.ClusterCIDR != "" {
		p, err := netip.ParsePrefix(node.ClusterCIDR)
		if err != nil || !p.Addr().Is4() {
			return Fragment{}, fmt.Errorf("cluster CIDR %q: %w", node.ClusterCIDR, ErrNotIPv4)
		}
	}
	for _, ip := range node.NodePortIPs {
		if err := ipv4(ip); err != nil {
			return Fragment{}, fmt.Errorf("nodeport address: %w", err)
		}
	}
	// NodePorts answer on every local address but loopback, or on the
	// given ones.
	nodePortMatch := "fib daddr type local ip daddr != 127.0.0.0/8"
	f := Fragment{}
	if node.NodePortIPs != nil {
		nodePortMatch = "ip daddr @" + setNodePortIPs
		f.Sets = append(f.Sets, Set{Name: setNodePortIPs, Type: "ipv4_addr"})
		for _, ip := range sortedCopy(node.NodePortIPs) {
			f.Elements = append(f.Elements, Element{Set: setNodePortIPs, Key: []string{ip}})
		}
	}
	f.Sets = append(f.Sets, Set{Name: setClusterIPs, Type: "ipv4_addr"})
	f.Maps = []Map{
		{Name: mapNoEndpointNodePorts, Type: "inet_proto . inet_service : verdict"},
		{Name: mapNoEndpointServices, Type: "ipv4_addr . inet_proto . inet_service : verdict"},
		{Name: mapServiceIPs, Type: "ipv4_addr . inet_proto . inet_service : verdict"},
		{Name: mapServiceNodePorts, Type: "inet_proto . inet_service : verdict"},
	}
	hooked := func(name, typ, hook, prio string, rules ...string) Chain {
		return Chain{Name: name, Type: typ, Hook: hook, Priority: prio, Rules: rules}
	}
	f.Chains = []Chain{
		hooked(chainFilterInput, "filter", "input", "dstnat-10",
			"ct state new jump "+chainNodePortEndpoints,
			"ct state new jump "+chainServiceEndpoints),
		hooked(chainFilterForward, "filter", "forward", "dstnat-10",
			"ct state new jump "+chainServiceEndpoints,
			"ct state new jump "+chainClusterIPsCheck),
		hooked(chainFilterOutput, "filter", "output", "dstnat-10",
			"ct state new jump "+chainServiceEndpoints),
		hooked(chainFilterOutputPostDNAT, "filter", "output", "dstnat+10",
			"ct state new jump "+chainClusterIPsCheck),
		hooked(chainNATPrerouting, "nat", "prerouting", "dstnat", "jump "+chainServices),
		hooked(chainNATOutput, "nat", "output", "dstnat", "jump "+chainServices),
		hooked(chainNATPostrouting, "nat", "postrouting", "srcnat", "jump "+chainMasquerading),
		{Name: chainServices, Rules: []string{
			"ip daddr . meta l4proto . th dport vmap @" + mapServiceIPs,
			nodePortMatch + " meta l4proto . th dport vmap @" + mapServiceNodePorts,
		}},
		{Name: chainServiceEndpoints, Rules: []string{
			"ip daddr . meta l4proto . th dport vmap @" + mapNoEndpointServices,
		}},
		{Name: chainNodePortEndpoints, Rules: []string{
			nodePortMatch + " meta l4proto . th dport vmap @" + mapNoEndpointNodePorts,
		}},
		{Name: chainClusterIPsCheck, Rules: []string{
			"ip daddr @" + setClusterIPs + " reject",
		}},
		{Name: chainMasquerading, Rules: []string{
			"meta mark & " + masqueradeMark + " == 0 return",
			"meta mark set meta mark ^ " + masqueradeMark,
			"masquerade fully-random",
		}},
		{Name: chainMarkForMasquerade, Rules: []string{
			"meta mark set meta mark | " + masqueradeMark,
		}},
		{Name: chainReject, Rules: []string{"reject"}},
	}
	return f, nil
}

// BuildService is one Service's fragment, or nil when the Service has no
// rules (headless: no ClusterIP).
func BuildService(node NodeInfo, svc *Service) (*Fragment, error) {
	if svc.ClusterIP == "" || svc.ClusterIP == "None" {
		return nil, nil
	}
	if err := ipv4(svc.ClusterIP); err != nil {
		return nil, err
	}
	f := &Fragment{}
	f.Elements = append(f.Elements, Element{Set: setClusterIPs, Key: []string{svc.ClusterIP}})
	for i := range svc.Ports {
		p := &svc.Ports[i]
		proto := p.Protocol
		if proto == "" {
			proto = "tcp"
		}
		port := strconv.Itoa(int(p.Port))
		nodePort := strconv.Itoa(int(p.NodePort))
		eps := UsableEndpoints(p.Endpoints)
		note := comment(svc, p)
		if len(eps) == 0 {
			// Refused at once, as kube-proxy does, not left to time out.
			f.Elements = append(f.Elements, Element{Map: mapNoEndpointServices,
				Key: []string{svc.ClusterIP, proto, port}, Value: "goto " + chainReject, Comment: note})
			if p.NodePort != 0 {
				f.Elements = append(f.Elements, Element{Map: mapNoEndpointNodePorts,
					Key: []string{proto, nodePort}, Value: "goto " + chainReject, Comment: note})
			}
			continue
		}
		svcChain := serviceChain(svc, p)
		var rules []string
		if node.ClusterCIDR != "" {
			rules = append(rules, fmt.Sprintf("ip daddr %s %s dport %d ip saddr != %s jump %s",
				svc.ClusterIP, proto, p.Port, node.ClusterCIDR, chainMarkForMasquerade))
		}
		var vmap []string
		for j, ep := range eps {
			if err := ipv4(ep.IP); err != nil {
				return nil, fmt.Errorf("endpoint: %w", err)
			}
			epChain := endpointChain(svc, p, ep)
			epRules := []string{"ip saddr " + ep.IP + " jump " + chainMarkForMasquerade}
			if svc.AffinityTimeout > 0 {
				set := affinitySet(svc, p, ep)
				f.Sets = append(f.Sets, Set{Name: set, Type: "ipv4_addr", Dynamic: true, Timeout: svc.AffinityTimeout})
				rules = append(rules, "ip saddr @"+set+" goto "+epChain)
				epRules = append(epRules, "update @"+set+" { ip saddr }")
			}
			epRules = append(epRules, fmt.Sprintf("meta l4proto %s dnat to %s:%d", proto, ep.IP, ep.Port))
			f.Chains = append(f.Chains, Chain{Name: epChain, Rules: epRules})
			vmap = append(vmap, fmt.Sprintf("%d : goto %s", j, epChain))
		}
		rules = append(rules, fmt.Sprintf("numgen random mod %d vmap { %s }", len(eps), strings.Join(vmap, " , ")))
		f.Chains = append(f.Chains, Chain{Name: svcChain, Rules: rules})
		f.Elements = append(f.Elements, Element{Map: mapServiceIPs,
			Key: []string{svc.ClusterIP, proto, port}, Value: "goto " + svcChain, Comment: note})
		if p.NodePort != 0 {
			ext := externalChain(svc, p)
			f.Chains = append(f.Chains, Chain{Name: ext, Rules: []string{
				"jump " + chainMarkForMasquerade,
				"goto " + svcChain,
			}})
			f.Elements = append(f.Elements, Element{Map: mapServiceNodePorts,
				Key: []string{proto, nodePort}, Value: "goto " + ext, Comment: note})
		}
	}
	return f, nil
}

func sortedCopy(s []string) []string {
	out := slices.Clone(s)
	slices.Sort(out)
	return out
}
