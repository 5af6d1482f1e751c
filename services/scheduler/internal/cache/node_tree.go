package cache

import (
	"slices"

	corev1 "podline.dev/proto/core/v1"
)

// Topology labels, as in core/v1.
const (
	LabelTopologyZone   = "topology.kubernetes.io/zone"
	LabelTopologyRegion = "topology.kubernetes.io/region"
	LabelHostname       = "kubernetes.io/hostname"
)

// nodeTree keeps node names by zone and lists them round-robin across
// zones, as Kubernetes' nodeTree does.
type nodeTree struct {
	tree  map[string][]string
	zones []string
	n     int
}

func newNodeTree() *nodeTree { return &nodeTree{tree: map[string][]string{}} }

func zoneKey(node *corev1.Node) string {
	l := node.GetMetadata().GetLabels()
	region, zone := l[LabelTopologyRegion], l[LabelTopologyZone]
	if region == "" && zone == "" {
		return ""
	}
	return region + ":\x00:" + zone
}

func (t *nodeTree) add(node *corev1.Node) {
	z := zoneKey(node)
	name := node.GetMetadata().GetName()
	if slices.Contains(t.tree[z], name) {
		return
	}
	if _, ok := t.tree[z]; !ok {
		t.zones = append(t.zones, z)
	}
	t.tree[z] = append(t.tree[z], name)
	t.n++
}

func (t *nodeTree) remove(node *corev1.Node) {
	z := zoneKey(node)
	names := t.tree[z]
	i := slices.Index(names, node.GetMetadata().GetName())
	if i < 0 {
		return
	}
	names = slices.Delete(names, i, i+1)
	t.n--
	if len(names) == 0 {
		delete(t.tree, z)
		t.zones = slices.DeleteFunc(t.zones, func(s string) bool { return s == z })
		return
	}
	t.tree[z] = names
}

func (t *nodeTree) update(oldNode, newNode *corev1.Node) {
	if oldNode != nil && zoneKey(oldNode) == zoneKey(newNode) {
		return
	}
	if oldNode != nil {
		t.remove(oldNode)
	}
	t.add(newNode)
}

// list is every node, one zone at a time in turn.
func (t *nodeTree) list() []string {
	out := make([]string, 0, t.n)
	for i := 0; len(out) < t.n; i++ {
		for _, z := range t.zones {
			if names := t.tree[z]; i < len(names) {
				out = append(out, names[i])
			}
		}
	}
	return out
}
