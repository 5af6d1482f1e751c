package rules

import (
	"crypto/sha256"
	"encoding/base32"
	"fmt"
)

// Names of the base objects, as kube-proxy names them.
const (
	chainFilterInput          = "filter-input"
	chainFilterForward        = "filter-forward"
	chainFilterOutput         = "filter-output"
	chainFilterOutputPostDNAT = "filter-output-post-dnat"
	chainNATPrerouting        = "nat-prerouting"
	chainNATOutput            = "nat-output"
	chainNATPostrouting       = "nat-postrouting"
	chainServices             = "services"
	chainServiceEndpoints     = "service-endpoints-check"
	chainNodePortEndpoints    = "nodeport-endpoints-check"
	chainClusterIPsCheck      = "cluster-ips-check"
	chainMasquerading         = "masquerading"
	chainMarkForMasquerade    = "mark-for-masquerade"
	chainReject               = "reject-chain"

	mapServiceIPs          = "service-ips"
	mapServiceNodePorts    = "service-nodeports"
	mapNoEndpointServices  = "no-endpoint-services"
	mapNoEndpointNodePorts = "no-endpoint-nodeports"
	setClusterIPs          = "cluster-ips"
	setNodePortIPs         = "nodeport-ips"

	// masqueradeMark is the packet mark bit that asks nat-postrouting to
	// masquerade (kube-proxy's 0x4000).
	masqueradeMark = "0x4000"
)

// maxBase keeps a chain name (prefix, hash and name) under nftables' 256.
const maxBase = 200

// hashed prefixes name with 8 base32 characters of its SHA-256, so chain
// names stay unique when name is truncated, and readable when it is not.
func hashed(name string) string {
	sum := sha256.Sum256([]byte(name))
	h := base32.StdEncoding.EncodeToString(sum[:])[:8]
	if len(name) > maxBase {
		name = name[:maxBase]
	}
	return h + "-" + name
}

// portName is "<ns>/<name>/<proto>/<port name>", kube-proxy's base of the
// chain names of one Service port.
func portName(svc *Service, p *Port) string {
	return fmt.Sprintf("%s/%s/%s/%s", svc.Namespace, svc.Name, p.Protocol, p.Name)
}

func serviceChain(svc *Service, p *Port) string {
	return "service-" + hashed(portName(svc, p))
}

func externalChain(svc *Service, p *Port) string {
	return "external-" + hashed(portName(svc, p))
}

func endpointBase(svc *Service, p *Port, ep Endpoint) string {
	return hashed(fmt.Sprintf("%s__%s/%d", portName(svc, p), ep.IP, ep.Port))
}

func endpointChain(svc *Service, p *Port, ep Endpoint) string {
	return "endpoint-" + endpointBase(svc, p, ep)
}

func affinitySet(svc *Service, p *Port, ep Endpoint) string {
	return "affinity-" + endpointBase(svc, p, ep)
}

// comment names a Service port in element comments: "ns/name:port".
func comment(svc *Service, p *Port) string {
	if p.Name == "" {
		return svc.Namespace + "/" + svc.Name
	}
	return svc.Namespace + "/" + svc.Name + ":" + p.Name
}
