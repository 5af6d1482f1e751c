// Package node is the Node authorizer: it lets a kubelet, authenticated as
// system:node:<name> in group system:nodes, read only the Pods bound to its
// node (get, and list/watch with the field selector spec.nodeName=<name>;
// a get of a Pod that does not exist goes on to its 404)
// and the Secrets, ConfigMaps and PersistentVolumeClaims those Pods use;
// write only its own Node object, its own Lease in kube-node-lease, and
// the status of its Pods; create mirror Pods, Events, and tokens of the
// ServiceAccounts its Pods run as; review tokens and access (its own API's
// webhook authentication and authorization); and read Nodes and Services.
// Relationships come from a Graph, backed by the
// apiserver's Pod cache indexed by node. For other users, and for requests
// it does not govern, it has no opinion.
package node
