package patch

import "strings"

// ListKind says how a list field merges.
type ListKind int

const (
	// Atomic lists are replaced whole (the default).
	Atomic ListKind = iota
	// Map lists hold objects merged item by item on a merge key.
	Map
	// Set lists hold scalars merged as a set (finalizers).
	Set
)

// ListRule is how a list field merges, and its merge key for Map lists.
type ListRule struct {
	Kind ListKind
	Key  string
}

// listRules are the list fields that merge rather than replace, by the
// field path's last names (without list indexes), with Kubernetes' merge
// keys (patchMergeKey in its Go types). The longest matching suffix wins.
var listRules = map[string]ListRule{
	"containers":                {Map, "name"},
	"initContainers":            {Map, "name"},
	"ephemeralContainers":       {Map, "name"},
	"containers.ports":          {Map, "containerPort"},
	"initContainers.ports":      {Map, "containerPort"},
	"env":                       {Map, "name"},
	"volumes":                   {Map, "name"},
	"volumeMounts":              {Map, "mountPath"},
	"volumeDevices":             {Map, "devicePath"},
	"imagePullSecrets":          {Map, "name"},
	"hostAliases":               {Map, "ip"},
	"topologySpreadConstraints": {Map, "topologyKey"},
	"resourceClaims":            {Map, "name"},
	"conditions":                {Map, "type"},
	"addresses":                 {Map, "type"},
	"ownerReferences":           {Map, "uid"},
	"finalizers":                {Set, ""},
	"spec.ports":                {Map, "port"},
	// An Endpoints' lists are atomic; its addresses are no node's addresses.
	"subsets.addresses":         {Atomic, ""},
	"subsets.notReadyAddresses": {Atomic, ""},
}

// Rule returns how the list at path (field names from the object's root,
// list indexes left out) merges.
func Rule(path []string) ListRule {
	best, bestLen := ListRule{}, 0
	for n := 1; n <= len(path) && n <= 5; n++ {
		if r, ok := listRules[strings.Join(path[len(path)-n:], ".")]; ok && n > bestLen {
			best, bestLen = r, n
		}
	}
	return best
}

func appendPath(path []string, name string) []string {
	return append(path[:len(path):len(path)], name)
}
