// Package volumes prepares a pod's volumes on the node before its
// containers start, under <root>/pods/<uid>/volumes/<plugin>/<name> as
// the kubelet lays them out: emptyDir (a directory, or a tmpfs for medium
// Memory), hostPath (checked or created by type), configMap, secret,
// downwardAPI and projected (configMap, secret, downwardAPI and a
// serviceAccountToken file) written as files with their modes. SetUp is
// idempotent and rewrites file contents that changed, so calling it on
// every sync keeps configMap and secret volumes fresh; TearDown unmounts
// and removes everything of a pod.
//
// ConfigMaps and Secrets come from a Source (the apiserver); the token of
// a projected serviceAccountToken from Tokens (internal/token: a token of
// the Pod's account bound to the Pod, from the TokenRequest API, renewed
// at 80% of its life), rewritten on each sync like the rest.
package volumes
