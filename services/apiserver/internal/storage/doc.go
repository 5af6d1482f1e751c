// Package storage keeps API objects in etcd the way kube-apiserver does:
// keys /registry/<resource>/<namespace>/<name>, values a protobuf envelope
// (magic "k8s\x00" + Unknown naming apiVersion and kind), resourceVersion
// equal to the key's mod revision. Create is a transaction on
// create_revision == 0; updates and deletes compare mod_revision. Store is
// the one generic implementation for every resource; the registry above it
// adds the API rules (uid, generation, status, graceful deletion).
package storage
