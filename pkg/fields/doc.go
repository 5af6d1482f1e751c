// Package fields parses and evaluates Kubernetes field selectors
// ("spec.nodeName=n1,status.phase!=Failed") over the proto API objects:
// Parse checks each field is selectable for the kind, as kube-apiserver
// does per kind, and Selector.Matches reads the named scalar by its JSON
// path. The apiserver's registries and the watchcache replicas share it.
package fields
