package printers

import (
	"fmt"
	"net"
	"sort"
	"strconv"
	"strings"
	"time"

	"podline.dev/pkg/labels"
	corev1 "podline.dev/proto/core/v1"
)

func init() {
	register(&corev1.Node{}, handler{columns: []Column{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the node"},
		{Name: "Roles", Type: "string", Description: "The roles of the node"},
		ageColumn,
		{Name: "Version", Type: "string", Description: "Kubelet Version reported by the node."},
		{Name: "Internal-IP", Type: "string", Priority: 1, Description: "List of addresses reachable to the node. Queried from cloud provider, if available."},
		{Name: "External-IP", Type: "string", Priority: 1, Description: "List of addresses reachable to the node. Queried from cloud provider, if available."},
		{Name: "OS-Image", Type: "string", Priority: 1, Description: "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy))."},
		{Name: "Kernel-Version", Type: "string", Priority: 1, Description: "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64)."},
		{Name: "Container-Runtime", Type: "string", Priority: 1, Description: "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2)."},
	}, row: rowFunc(nodeCells)})
	register(&corev1.Namespace{}, handler{columns: []Column{
		nameColumn,
		{Name: "Status", Type: "string", Description: "The status of the namespace"},
		ageColumn,
	}, row: rowFunc(func(ns *corev1.Namespace, now time.Time) []any {
		return []any{ns.GetMetadata().GetName(), ns.GetStatus().GetPhase(), since(ns.GetMetadata().GetCreationTimestamp(), now)}
	})})
	register(&corev1.Event{}, handler{columns: []Column{
		{Name: "Last Seen", Type: "string", Description: "The last time this event was seen."},
		{Name: "Type", Type: "string", Description: "Type of this event (Normal, Warning), new types could be added in the future."},
		{Name: "Reason", Type: "string", Description: "This should be a short, machine understandable string that gives the reason for the transition into the object's current status."},
		{Name: "Object", Type: "string", Description: "The object that this event is about."},
		{Name: "Subobject", Type: "string", Priority: 1, Description: "The field of the object this event is about, if any."},
		{Name: "Source", Type: "string", Priority: 1, Description: "The component reporting this event."},
		{Name: "Message", Type: "string", Description: "A human-readable description of the status of this operation."},
		{Name: "First Seen", Type: "string", Priority: 1, Description: "The time at which the event was first recorded."},
		{Name: "Count", Type: "string", Priority: 1, Description: "The number of times this event has occurred."},
		{Name: "Name", Type: "string", Priority: 1, Format: "name", Description: "Name must be unique within a namespace."},
	}, row: rowFunc(eventCells)})
	register(&corev1.Service{}, handler{columns: []Column{
		nameColumn,
		{Name: "Type", Type: "string", Description: "type determines how the Service is exposed."},
		{Name: "Cluster-IP", Type: "string", Description: "clusterIP is the IP address of the service."},
		{Name: "External-IP", Type: "string", Description: "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service."},
		{Name: "Port(s)", Type: "string", Description: "The list of ports that are exposed by this service."},
		ageColumn,
		{Name: "Selector", Type: "string", Priority: 1, Description: "Route service traffic to pods with label keys and values matching this selector."},
	}, row: rowFunc(serviceCells)})
	register(&corev1.Endpoints{}, handler{columns: []Column{
		nameColumn,
		{Name: "Endpoints", Type: "string", Description: "The addresses and ports of the endpoints: the union of all subsets."},
		ageColumn,
	}, row: rowFunc(func(e *corev1.Endpoints, now time.Time) []any {
		return []any{e.GetMetadata().GetName(), endpointsCell(e), since(e.GetMetadata().GetCreationTimestamp(), now)}
	})})
	register(&corev1.ConfigMap{}, handler{columns: []Column{
		nameColumn,
		{Name: "Data", Type: "string", Description: "Data contains the configuration data."},
		ageColumn,
	}, row: rowFunc(func(cm *corev1.ConfigMap, now time.Time) []any {
		return []any{cm.GetMetadata().GetName(), int64(len(cm.GetData()) + len(cm.GetBinaryData())), since(cm.GetMetadata().GetCreationTimestamp(), now)}
	})})
	register(&corev1.Secret{}, handler{columns: []Column{
		nameColumn,
		{Name: "Type", Type: "string", Description: "Used to facilitate programmatic handling of secret data."},
		{Name: "Data", Type: "string", Description: "Data contains the secret data."},
		ageColumn,
	}, row: rowFunc(func(s *corev1.Secret, now time.Time) []any {
		// stringData is write-only: it is merged into data when written.
		return []any{s.GetMetadata().GetName(), s.GetType(), int64(len(s.GetData())), since(s.GetMetadata().GetCreationTimestamp(), now)}
	})})
	register(&corev1.ResourceQuota{}, handler{columns: []Column{
		nameColumn, ageColumn,
		{Name: "Request", Type: "string", Description: "Request represents a minimum amount of cpu/memory that a container may consume."},
		{Name: "Limit", Type: "string", Description: "Limits control the maximum amount of cpu/memory that a container may use independent of contention on the node."},
	}, row: rowFunc(quotaCells)})
	register(&corev1.ServiceAccount{}, handler{columns: []Column{
		nameColumn,
		{Name: "Secrets", Type: "string", Description: "Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use."},
		ageColumn,
	}, row: rowFunc(func(sa *corev1.ServiceAccount, now time.Time) []any {
		return []any{sa.GetMetadata().GetName(), int64(len(sa.GetSecrets())), since(sa.GetMetadata().GetCreationTimestamp(), now)}
	})})
}

// endpointsCell lists the ready addresses of every subset as ip:port, port
// by port (a subset without ports lists bare IPs), at most three of them
// followed by " + N more..."; an Endpoints without subsets is <none>.
func endpointsCell(e *corev1.Endpoints) string {
	if len(e.GetSubsets()) == 0 {
		return "<none>"
	}
	const most = 3
	var list []string
	count := 0
	add := func(s string) {
		count++
		if len(list) < most {
			list = append(list, s)
		}
	}
	for _, ss := range e.GetSubsets() {
		if len(ss.GetPorts()) == 0 {
			for _, a := range ss.GetAddresses() {
				add(a.GetIp())
			}
			continue
		}
		for _, p := range ss.GetPorts() {
			for _, a := range ss.GetAddresses() {
				add(net.JoinHostPort(a.GetIp(), strconv.Itoa(int(p.GetPort()))))
			}
		}
	}
	out := strings.Join(list, ",")
	if count > most {
		out += fmt.Sprintf(" + %d more...", count-most)
	}
	return out
}

// nodeCells: STATUS is Ready, NotReady or Unknown from the Ready
// condition, with SchedulingDisabled for a cordoned node; ROLES come from
// the node-role.kubernetes.io/<role> and kubernetes.io/role labels.
func nodeCells(n *corev1.Node, now time.Time) []any {
	status := "Unknown"
	for _, c := range n.GetStatus().GetConditions() {
		if c.GetType() == "Ready" {
			status = "NotReady"
			if c.GetStatus() == "True" {
				status = "Ready"
			}
		}
	}
	if n.GetSpec().GetUnschedulable() {
		status += ",SchedulingDisabled"
	}
	info := n.GetStatus().GetNodeInfo()
	return []any{
		n.GetMetadata().GetName(), status, orNone(strings.Join(nodeRoles(n.GetMetadata().GetLabels()), ",")),
		since(n.GetMetadata().GetCreationTimestamp(), now), info.GetKubeletVersion(),
		orNone(nodeAddress(n, "InternalIP")), orNone(nodeAddress(n, "ExternalIP")),
		orUnknown(info.GetOsImage()), orUnknown(info.GetKernelVersion()), orUnknown(info.GetContainerRuntimeVersion()),
	}
}

func nodeRoles(l map[string]string) []string {
	set := map[string]bool{}
	for k, v := range l {
		switch {
		case strings.HasPrefix(k, "node-role.kubernetes.io/"):
			if role := strings.TrimPrefix(k, "node-role.kubernetes.io/"); role != "" {
				set[role] = true
			}
		case k == "kubernetes.io/role" && v != "":
			set[v] = true
		}
	}
	roles := make([]string, 0, len(set))
	for r := range set {
		roles = append(roles, r)
	}
	sort.Strings(roles)
	return roles
}

func nodeAddress(n *corev1.Node, typ string) string {
	for _, a := range n.GetStatus().GetAddresses() {
		if a.GetType() == typ {
			return a.GetAddress()
		}
	}
	return ""
}

func orUnknown(s string) string {
	if s == "" {
		return "<unknown>"
	}
	return s
}

// eventCells: times fall back from lastTimestamp to firstTimestamp to
// eventTime, and a series carries its own count and last time.
func eventCells(e *corev1.Event, now time.Time) []any {
	first := since(e.GetFirstTimestamp(), now)
	if e.GetFirstTimestamp().GetSeconds() == 0 {
		first = sinceMicro(e.GetEventTime(), now)
	}
	last := since(e.GetLastTimestamp(), now)
	if e.GetLastTimestamp().GetSeconds() == 0 {
		last = first
	}
	count := e.GetCount()
	if s := e.GetSeries(); s != nil {
		last, count = sinceMicro(s.GetLastObservedTime(), now), s.GetCount()
	} else if count == 0 {
		count = 1
	}
	obj := e.GetInvolvedObject()
	target := strings.ToLower(obj.GetKind())
	if obj.GetName() != "" {
		target += "/" + obj.GetName()
	}
	return []any{
		last, e.GetType(), e.GetReason(), target, obj.GetFieldPath(), eventSource(e),
		strings.TrimSpace(e.GetMessage()), first, int64(count), e.GetMetadata().GetName(),
	}
}

// eventSource is "component, host", from source or the reporting fields.
func eventSource(e *corev1.Event) string {
	component, host := e.GetSource().GetComponent(), e.GetSource().GetHost()
	if component == "" {
		component = e.GetReportingComponent()
	}
	if host == "" {
		host = e.GetReportingInstance()
	}
	if host == "" {
		return component
	}
	return component + ", " + host
}

func serviceCells(s *corev1.Service, now time.Time) []any {
	spec := s.GetSpec()
	clusterIP := spec.GetClusterIp()
	if ips := spec.GetClusterIps(); len(ips) > 0 {
		clusterIP = ips[0]
	}
	var ports []string
	for _, p := range spec.GetPorts() {
		if p.GetNodePort() > 0 {
			ports = append(ports, fmt.Sprintf("%d:%d/%s", p.GetPort(), p.GetNodePort(), p.GetProtocol()))
		} else {
			ports = append(ports, fmt.Sprintf("%d/%s", p.GetPort(), p.GetProtocol()))
		}
	}
	return []any{
		s.GetMetadata().GetName(), spec.GetType(), orNone(clusterIP), serviceExternalIP(s),
		orNone(strings.Join(ports, ",")), since(s.GetMetadata().GetCreationTimestamp(), now),
		orNone(labels.Set(spec.GetSelector()).String()),
	}
}

// serviceExternalIP: the external IPs, a load balancer's ingress
// (<pending> until it has one), or an ExternalName's name.
func serviceExternalIP(s *corev1.Service) string {
	spec := s.GetSpec()
	ips := append([]string{}, spec.GetExternalIps()...)
	switch spec.GetType() {
	case "LoadBalancer":
		var lb []string
		for _, in := range s.GetStatus().GetLoadBalancer().GetIngress() {
			if in.GetIp() != "" {
				lb = append(lb, in.GetIp())
			} else if in.GetHostname() != "" {
				lb = append(lb, in.GetHostname())
			}
		}
		if ips = append(lb, ips...); len(ips) == 0 {
			return "<pending>"
		}
	case "ExternalName":
		return spec.GetExternalName()
	}
	return orNone(strings.Join(ips, ","))
}

// quotaCells lists each enforced resource as "<name>: <used>/<hard>",
// limits.* under LIMIT and the rest under REQUEST, sorted by name.
func quotaCells(q *corev1.ResourceQuota, now time.Time) []any {
	hard, used := q.GetStatus().GetHard(), q.GetStatus().GetUsed()
	names := make([]string, 0, len(hard))
	for n := range hard {
		names = append(names, n)
	}
	sort.Strings(names)
	var requests, limits []string
	for _, n := range names {
		u := used[n]
		if u == "" {
			u = "0"
		}
		entry := n + ": " + u + "/" + hard[n]
		if strings.HasPrefix(n, "limits.") {
			limits = append(limits, entry)
		} else {
			requests = append(requests, entry)
		}
	}
	return []any{q.GetMetadata().GetName(), since(q.GetMetadata().GetCreationTimestamp(), now), strings.Join(requests, ", "), strings.Join(limits, ", ")}
}
