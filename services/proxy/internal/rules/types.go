package rules

import "time"

// Table is the nftables table the proxy owns, of family ip.
const Table = "podline-proxy"

// DefaultAffinityTimeout is kube-proxy's ClientIP affinity timeout when the
// Service gives none (3 hours).
const DefaultAffinityTimeout = 10800 * time.Second

// NodeInfo is what the rules need to know of the node.
type NodeInfo struct {
	// ClusterCIDR is the pods' range (10.244.0.0/16): traffic to a
	// ClusterIP from outside it is masqueraded. Empty: none is.
	ClusterCIDR string
	// NodePortIPs are the addresses NodePorts answer on. Nil: every local
	// address but 127.0.0.0/8 (fib daddr type local), kube-proxy's default.
	NodePortIPs []string
}

// Service is one Service as the proxy sees it: its ClusterIP, its ports
// and each port's endpoints (already resolved from the EndpointSlices).
type Service struct {
	Namespace, Name string
	ClusterIP       string
	// AffinityTimeout is the ClientIP session affinity timeout; 0 means no
	// affinity.
	AffinityTimeout time.Duration
	Ports           []Port
}

// Key is the Service's namespace/name.
func (s *Service) Key() string { return s.Namespace + "/" + s.Name }

// Port is one port of a Service.
type Port struct {
	// Name is the Service port's name ("" for a single unnamed port).
	Name string
	// Protocol is "tcp", "udp" or "sctp".
	Protocol string
	Port     int32
	// NodePort is 0 unless the Service is of type NodePort (or
	// LoadBalancer).
	NodePort  int32
	Endpoints []Endpoint
}

// Endpoint is one backend of a Service port: an address and the target
// port its EndpointSlice gives for the Service port's name.
type Endpoint struct {
	IP          string
	Port        int32
	Ready       bool
	Serving     bool
	Terminating bool
}

// UsableEndpoints are the endpoints traffic goes to, as kube-proxy picks
// them: the ready ones; when none is ready, the serving ones that are
// terminating (so connections drain to a Pod being replaced rather than
// being refused). Duplicates (same IP and port) are kept once.
func UsableEndpoints(eps []Endpoint) []Endpoint {
	var ready, terminating []Endpoint
	seen := map[Endpoint]bool{}
	for _, ep := range eps {
		k := Endpoint{IP: ep.IP, Port: ep.Port}
		if seen[k] {
			continue
		}
		switch {
		case ep.Ready:
			seen[k] = true
			ready = append(ready, ep)
		case ep.Serving && ep.Terminating:
			terminating = append(terminating, ep)
		}
	}
	if len(ready) > 0 {
		return ready
	}
	out := terminating[:0]
	for _, ep := range terminating {
		k := Endpoint{IP: ep.IP, Port: ep.Port}
		if !seen[k] {
			seen[k] = true
			out = append(out, ep)
		}
	}
	return out
}
