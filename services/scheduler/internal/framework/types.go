package framework

import (
	"fmt"
	"strings"
	"sync/atomic"
	"time"

	"podline.dev/pkg/labels"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// PodInfo is a Pod with what the scheduler derives from it once: its
// requests and its parsed affinity terms. Pod is read-only.
type PodInfo struct {
	Pod                        *corev1.Pod
	RequiredAffinityTerms      []AffinityTerm
	RequiredAntiAffinityTerms  []AffinityTerm
	PreferredAffinityTerms     []WeightedAffinityTerm
	PreferredAntiAffinityTerms []WeightedAffinityTerm
	// Requests is what the pod asks for; NonZeroRequests counts missing
	// cpu/memory requests as the scoring defaults.
	Requests        Resource
	NonZeroRequests Resource
	// ParseError is the first problem met parsing the pod (a bad quantity
	// or selector); such a pod cannot be scheduled.
	ParseError error
}

// NewPodInfo derives a PodInfo from pod.
func NewPodInfo(pod *corev1.Pod) *PodInfo {
	pi := &PodInfo{}
	pi.Update(pod)
	return pi
}

// Update re-derives the PodInfo from a new version of its pod.
func (pi *PodInfo) Update(pod *corev1.Pod) {
	*pi = PodInfo{Pod: pod}
	var err error
	pi.Requests, err = PodRequests(pod, false)
	pi.noteErr(err)
	pi.NonZeroRequests, _ = PodRequests(pod, true)
	aff := pod.GetSpec().GetAffinity()
	pi.RequiredAffinityTerms = pi.terms(pod, aff.GetPodAffinity().GetRequiredDuringSchedulingIgnoredDuringExecution())
	pi.RequiredAntiAffinityTerms = pi.terms(pod, aff.GetPodAntiAffinity().GetRequiredDuringSchedulingIgnoredDuringExecution())
	pi.PreferredAffinityTerms = pi.weighted(pod, aff.GetPodAffinity().GetPreferredDuringSchedulingIgnoredDuringExecution())
	pi.PreferredAntiAffinityTerms = pi.weighted(pod, aff.GetPodAntiAffinity().GetPreferredDuringSchedulingIgnoredDuringExecution())
}

func (pi *PodInfo) noteErr(err error) {
	if err != nil && pi.ParseError == nil {
		pi.ParseError = err
	}
}

func (pi *PodInfo) terms(pod *corev1.Pod, in []*corev1.PodAffinityTerm) []AffinityTerm {
	if len(in) == 0 {
		return nil
	}
	out := make([]AffinityTerm, 0, len(in))
	for _, t := range in {
		at, err := NewAffinityTerm(pod, t)
		if err != nil {
			pi.noteErr(err)
			continue
		}
		out = append(out, at)
	}
	return out
}

func (pi *PodInfo) weighted(pod *corev1.Pod, in []*corev1.WeightedPodAffinityTerm) []WeightedAffinityTerm {
	if len(in) == 0 {
		return nil
	}
	out := make([]WeightedAffinityTerm, 0, len(in))
	for _, t := range in {
		at, err := NewAffinityTerm(pod, t.GetPodAffinityTerm())
		if err != nil {
			pi.noteErr(err)
			continue
		}
		out = append(out, WeightedAffinityTerm{AffinityTerm: at, Weight: t.GetWeight()})
	}
	return out
}

// AffinityTerm is a parsed PodAffinityTerm.
type AffinityTerm struct {
	// Namespaces are the namespaces named (or the pod's own when none are
	// named and there is no namespace selector).
	Namespaces map[string]bool
	// NamespaceSelector selects namespaces by their labels; nil selects none.
	// Namespace labels are not tracked here yet: an empty selector ({})
	// matches every namespace, and a non-empty one matches none.
	NamespaceSelector labels.Selector
	Selector          labels.Selector
	TopologyKey       string
}

// WeightedAffinityTerm is a preferred term with its weight.
type WeightedAffinityTerm struct {
	AffinityTerm
	Weight int32
}

// NewAffinityTerm parses term as written in pod's spec. matchLabelKeys and
// mismatchLabelKeys add the pod's own label values to the selector, as in
// Kubernetes.
func NewAffinityTerm(pod *corev1.Pod, term *corev1.PodAffinityTerm) (AffinityTerm, error) {
	sel, err := labels.FromLabelSelector(withLabelKeys(pod, term))
	if err != nil {
		return AffinityTerm{}, err
	}
	at := AffinityTerm{Selector: sel, TopologyKey: term.GetTopologyKey(), Namespaces: map[string]bool{}}
	for _, ns := range term.GetNamespaces() {
		at.Namespaces[ns] = true
	}
	if ns := term.GetNamespaceSelector(); ns != nil {
		if len(ns.GetMatchLabels()) == 0 && len(ns.GetMatchExpressions()) == 0 {
			at.NamespaceSelector = labels.Everything()
		} else {
			at.NamespaceSelector = labels.Nothing()
		}
	} else if len(at.Namespaces) == 0 {
		at.Namespaces[pod.GetMetadata().GetNamespace()] = true
	}
	return at, nil
}

func withLabelKeys(pod *corev1.Pod, term *corev1.PodAffinityTerm) *metav1.LabelSelector {
	ls := term.GetLabelSelector()
	if ls == nil || (len(term.GetMatchLabelKeys()) == 0 && len(term.GetMismatchLabelKeys()) == 0) {
		return ls
	}
	out := &metav1.LabelSelector{MatchLabels: ls.GetMatchLabels(), MatchExpressions: append([]*metav1.LabelSelectorRequirement(nil), ls.GetMatchExpressions()...)}
	podLabels := pod.GetMetadata().GetLabels()
	for _, k := range term.GetMatchLabelKeys() {
		if v, ok := podLabels[k]; ok {
			out.MatchExpressions = append(out.MatchExpressions, &metav1.LabelSelectorRequirement{Key: k, Operator: "In", Values: []string{v}})
		}
	}
	for _, k := range term.GetMismatchLabelKeys() {
		if v, ok := podLabels[k]; ok {
			out.MatchExpressions = append(out.MatchExpressions, &metav1.LabelSelectorRequirement{Key: k, Operator: "NotIn", Values: []string{v}})
		}
	}
	return out
}

// Matches reports whether pod is in the term's namespaces and matches its selector.
func (t *AffinityTerm) Matches(pod *corev1.Pod) bool {
	ns := pod.GetMetadata().GetNamespace()
	if !t.Namespaces[ns] && (t.NamespaceSelector == nil || !t.NamespaceSelector.Matches(nil)) {
		return false
	}
	return t.Selector.Matches(pod.GetMetadata().GetLabels())
}

// QueuedPodInfo is a PodInfo in the scheduling queue.
type QueuedPodInfo struct {
	*PodInfo
	// Timestamp is when the pod last entered the queue (or failed).
	Timestamp time.Time
	// Attempts counts scheduling attempts; backoff doubles with each.
	Attempts int
	// InitialAttemptTimestamp is when the pod was first popped.
	InitialAttemptTimestamp *time.Time
	// UnschedulablePlugins rejected the pod in its last attempt; only
	// events they registered move it out of the unschedulable pool.
	UnschedulablePlugins map[string]bool
	// PendingPlugins returned Pending (PreEnqueue gates).
	PendingPlugins map[string]bool
	// Gated is true while a PreEnqueue plugin holds the pod back.
	Gated bool
}

// Key is "namespace/name".
func (q *QueuedPodInfo) Key() string {
	md := q.Pod.GetMetadata()
	return md.GetNamespace() + "/" + md.GetName()
}

// NormalizedImageName adds ":latest" to an image without a tag or digest,
// as Kubernetes' ImageLocality does.
func NormalizedImageName(name string) string {
	if strings.LastIndex(name, ":") <= strings.LastIndex(name, "/") {
		name += ":latest"
	}
	return name
}

// ImageStateSummary is an image on a node and how many nodes have it.
type ImageStateSummary struct {
	Size     int64
	NumNodes int
}

// ProtocolPort is a host port and its protocol.
type ProtocolPort struct {
	Protocol string
	Port     int32
}

// HostPortInfo holds the host ports used on a node, by host IP.
type HostPortInfo map[string]map[ProtocolPort]struct{}

const defaultHostIP = "0.0.0.0"

func sanitize(ip, protocol string) (string, string) {
	if ip == "" {
		ip = defaultHostIP
	}
	if protocol == "" {
		protocol = "TCP"
	}
	return ip, protocol
}

// Add records a used host port.
func (h HostPortInfo) Add(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if h[ip] == nil {
		h[ip] = map[ProtocolPort]struct{}{}
	}
	h[ip][ProtocolPort{protocol, port}] = struct{}{}
}

// Remove forgets a used host port.
func (h HostPortInfo) Remove(ip, protocol string, port int32) {
	if port <= 0 {
		return
	}
	ip, protocol = sanitize(ip, protocol)
	if m := h[ip]; m != nil {
		delete(m, ProtocolPort{protocol, port})
		if len(m) == 0 {
			delete(h, ip)
		}
	}
}

// CheckConflict reports whether the port is taken: 0.0.0.0 conflicts with every IP.
func (h HostPortInfo) CheckConflict(ip, protocol string, port int32) bool {
	if port <= 0 {
		return false
	}
	ip, protocol = sanitize(ip, protocol)
	pp := ProtocolPort{protocol, port}
	if ip == defaultHostIP {
		for _, m := range h {
			if _, ok := m[pp]; ok {
				return true
			}
		}
		return false
	}
	for _, key := range []string{ip, defaultHostIP} {
		if _, ok := h[key][pp]; ok {
			return true
		}
	}
	return false
}

func (h HostPortInfo) clone() HostPortInfo {
	out := make(HostPortInfo, len(h))
	for ip, m := range h {
		c := make(map[ProtocolPort]struct{}, len(m))
		for k := range m {
			c[k] = struct{}{}
		}
		out[ip] = c
	}
	return out
}

var generation atomic.Int64

// nextGeneration is a process-wide counter: a NodeInfo's Generation rises
// with every change, so a snapshot copies only the nodes that changed.
func nextGeneration() int64 { return generation.Add(1) }

// NodeInfo is a node and what is on it, as the scheduler sees it.
type NodeInfo struct {
	node *corev1.Node
	// Pods are the pods on the node, assumed ones included.
	Pods []*PodInfo
	// PodsWithAffinity have pod affinity or anti-affinity terms;
	// PodsWithRequiredAntiAffinity have required anti-affinity terms.
	PodsWithAffinity             []*PodInfo
	PodsWithRequiredAntiAffinity []*PodInfo
	UsedPorts                    HostPortInfo
	// Requested sums the pods' requests; NonZeroRequested uses the scoring defaults.
	Requested        Resource
	NonZeroRequested Resource
	Allocatable      Resource
	// ImageStates are the node's images by normalized name.
	ImageStates map[string]*ImageStateSummary
	Generation  int64
	// labelCounts counts the node's pods that are not terminating by
	// namespace and label, so selectors of one label are answered without
	// walking the pods (PodTopologySpread's per-node counts).
	labelCounts map[string]int
}

// PodLabelKey names one label of pods in one namespace, for PodLabelCount.
func PodLabelKey(namespace, key, value string) string {
	return namespace + "\x00" + key + "\x00" + value
}

// PodLabelCounts calls f for every pod label key on the node and its count.
func (n *NodeInfo) PodLabelCounts(f func(podLabelKey string, count int)) {
	for k, v := range n.labelCounts {
		f(k, v)
	}
}

// PodLabelCount is how many non-terminating pods on the node carry the
// label named by PodLabelKey(namespace, key, value).
func (n *NodeInfo) PodLabelCount(podLabelKey string) int {
	return n.labelCounts[podLabelKey]
}

// NewNodeInfo returns a NodeInfo holding pods.
func NewNodeInfo(pods ...*corev1.Pod) *NodeInfo {
	ni := &NodeInfo{UsedPorts: HostPortInfo{}, ImageStates: map[string]*ImageStateSummary{}, Generation: nextGeneration()}
	for _, p := range pods {
		ni.AddPod(p)
	}
	return ni
}

// Node is the node, or nil when only its pods are known so far.
func (n *NodeInfo) Node() *corev1.Node {
	if n == nil {
		return nil
	}
	return n.node
}

// Name is the node's name.
func (n *NodeInfo) Name() string { return n.node.GetMetadata().GetName() }

// SetNode sets the node and parses its allocatable resources.
func (n *NodeInfo) SetNode(node *corev1.Node) {
	n.node = node
	n.Allocatable, _ = NewResource(node.GetStatus().GetAllocatable())
	n.Generation = nextGeneration()
}

// RemoveNode forgets the node (its pods may still be known).
func (n *NodeInfo) RemoveNode() {
	n.node = nil
	n.Generation = nextGeneration()
}

// AddPod adds a pod to the node.
func (n *NodeInfo) AddPod(pod *corev1.Pod) { n.AddPodInfo(NewPodInfo(pod)) }

// AddPodInfo adds a pod to the node.
func (n *NodeInfo) AddPodInfo(pi *PodInfo) {
	n.Pods = append(n.Pods, pi)
	if hasAffinity(pi) {
		n.PodsWithAffinity = append(n.PodsWithAffinity, pi)
	}
	if len(pi.RequiredAntiAffinityTerms) > 0 {
		n.PodsWithRequiredAntiAffinity = append(n.PodsWithRequiredAntiAffinity, pi)
	}
	n.update(pi, 1)
}

// RemovePod removes the pod with pod's UID (or namespace/name when it has none).
func (n *NodeInfo) RemovePod(pod *corev1.Pod) error {
	k := podKey(pod)
	for i, pi := range n.Pods {
		if podKey(pi.Pod) != k {
			continue
		}
		n.Pods = removeAt(n.Pods, i)
		n.PodsWithAffinity = removeKey(n.PodsWithAffinity, k)
		n.PodsWithRequiredAntiAffinity = removeKey(n.PodsWithRequiredAntiAffinity, k)
		n.update(pi, -1)
		return nil
	}
	return fmt.Errorf("no pod %s/%s on node %s", pod.GetMetadata().GetNamespace(), pod.GetMetadata().GetName(), n.Name())
}

func (n *NodeInfo) update(pi *PodInfo, sign int64) {
	if md := pi.Pod.GetMetadata(); md.GetDeletionTimestamp() == nil {
		if n.labelCounts == nil {
			n.labelCounts = map[string]int{}
		}
		for k, v := range md.GetLabels() {
			l := PodLabelKey(md.GetNamespace(), k, v)
			n.labelCounts[l] += int(sign)
			if n.labelCounts[l] == 0 {
				delete(n.labelCounts, l)
			}
		}
	}
	r := pi.Requests
	nz := pi.NonZeroRequests
	if sign > 0 {
		n.Requested.Add(r)
		n.NonZeroRequested.MilliCPU += nz.MilliCPU
		n.NonZeroRequested.Memory += nz.Memory
	} else {
		n.Requested.Sub(r)
		n.NonZeroRequested.MilliCPU -= nz.MilliCPU
		n.NonZeroRequested.Memory -= nz.Memory
	}
	for _, c := range pi.Pod.GetSpec().GetContainers() {
		for _, p := range c.GetPorts() {
			if sign > 0 {
				n.UsedPorts.Add(p.GetHostIp(), p.GetProtocol(), p.GetHostPort())
			} else {
				n.UsedPorts.Remove(p.GetHostIp(), p.GetProtocol(), p.GetHostPort())
			}
		}
	}
	n.Generation = nextGeneration()
}

func hasAffinity(pi *PodInfo) bool {
	return len(pi.RequiredAffinityTerms) > 0 || len(pi.RequiredAntiAffinityTerms) > 0 ||
		len(pi.PreferredAffinityTerms) > 0 || len(pi.PreferredAntiAffinityTerms) > 0
}

// podKey identifies a pod: its UID, or namespace/name when it has none (tests).
func podKey(p *corev1.Pod) string {
	if uid := p.GetMetadata().GetUid(); uid != "" {
		return uid
	}
	return p.GetMetadata().GetNamespace() + "/" + p.GetMetadata().GetName()
}

// PodKey is the identity the cache and NodeInfo use for a pod.
func PodKey(p *corev1.Pod) string { return podKey(p) }

func removeAt(s []*PodInfo, i int) []*PodInfo {
	last := len(s) - 1
	s[i] = s[last]
	s[last] = nil
	return s[:last]
}

func removeKey(s []*PodInfo, k string) []*PodInfo {
	for i, pi := range s {
		if podKey(pi.Pod) == k {
			return removeAt(s, i)
		}
	}
	return s
}

// Clone copies the NodeInfo: slices and maps are new, PodInfos and the node are shared (read-only).
func (n *NodeInfo) Clone() *NodeInfo {
	c := &NodeInfo{
		node:             n.node,
		Pods:             append([]*PodInfo(nil), n.Pods...),
		UsedPorts:        n.UsedPorts.clone(),
		Requested:        n.Requested.Clone(),
		NonZeroRequested: n.NonZeroRequested.Clone(),
		Allocatable:      n.Allocatable.Clone(),
		ImageStates:      n.ImageStates,
		Generation:       n.Generation,
	}
	if len(n.labelCounts) > 0 {
		c.labelCounts = make(map[string]int, len(n.labelCounts))
		for k, v := range n.labelCounts {
			c.labelCounts[k] = v
		}
	}
	if len(n.PodsWithAffinity) > 0 {
		c.PodsWithAffinity = append([]*PodInfo(nil), n.PodsWithAffinity...)
	}
	if len(n.PodsWithRequiredAntiAffinity) > 0 {
		c.PodsWithRequiredAntiAffinity = append([]*PodInfo(nil), n.PodsWithRequiredAntiAffinity...)
	}
	return c
}

// NodeInfoLister reads the nodes of a snapshot.
type NodeInfoLister interface {
	// List is every node, in the snapshot's order.
	List() []*NodeInfo
	// HavePodsWithAffinityList are the nodes with pods that have affinity terms.
	HavePodsWithAffinityList() []*NodeInfo
	// HavePodsWithRequiredAntiAffinityList are the nodes with pods that have required anti-affinity.
	HavePodsWithRequiredAntiAffinityList() []*NodeInfo
	// Get returns one node's info.
	Get(name string) (*NodeInfo, error)
	// PodLabelNodes are the nodes with non-terminating pods carrying the
	// label named by PodLabelKey, with how many such pods each (read-only).
	PodLabelNodes(podLabelKey string) map[*NodeInfo]int
	// TopologyValues are the values nodes have for a label key, with how
	// many nodes have each (read-only).
	TopologyValues(key string) map[string]int
}

// SharedLister is the snapshot plugins read.
type SharedLister interface {
	NodeInfos() NodeInfoLister
}
