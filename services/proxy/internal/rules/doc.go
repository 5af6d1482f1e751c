// Package rules is the pure core of podline's node proxy: it turns the
// Services and endpoints the proxy knows (Service, Endpoint, NodeInfo) into
// nftables objects (Ruleset, one Fragment per Service plus the base
// chains), and a previous and a desired Ruleset into one knftables
// Transaction (Plan). Nothing here does I/O or reads the clock; the proxier
// lists the table, runs the transaction and keeps the Ruleset it ran.
//
// The layout is kube-proxy's in nftables mode, in the table "ip
// podline-proxy" (its own name, so that kube-proxy itself can run beside it
// on a node, as the benchmark's anchor does, without either flushing the
// other's rules):
//
//   - nat-prerouting and nat-output jump to "services", which looks the
//     destination up in the verdict map service-ips (ClusterIP . protocol .
//     port → goto service-<hash>-<ns>/<name>/<proto>/<port>) and, for
//     local destinations (fib daddr type local) or the --nodeport-addresses
//     set, in service-nodeports (protocol . nodePort → goto external-…);
//   - a service chain marks traffic from outside the cluster CIDR for
//     masquerade, sends a client with a live affinity entry back to its
//     endpoint, and picks one endpoint with `numgen random mod N vmap`;
//   - an endpoint chain marks hairpin traffic (source is the endpoint),
//     records the client in the endpoint's affinity set (ClientIP affinity,
//     a dynamic set with a timeout) and DNATs;
//   - nat-postrouting jumps to "masquerading", which masquerades what was
//     marked (mark 0x4000) and clears the mark;
//   - filter chains at dstnat-10 reject at once traffic to a ClusterIP:port
//     or NodePort without usable endpoints (no-endpoint-services,
//     no-endpoint-nodeports → goto reject-chain) and, after DNAT, traffic
//     to a ClusterIP on a port no Service has (cluster-ips).
//
// Endpoints are chosen as kube-proxy does: the ready ones, and only when
// none is ready, the serving terminating ones. Headless and ExternalName
// Services have no rules.
package rules
