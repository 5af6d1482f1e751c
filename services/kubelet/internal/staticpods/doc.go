// Package staticpods reads static pods: Pod manifests (YAML or JSON) in a
// directory (/etc/kubernetes/manifests) that the kubelet runs without the
// apiserver or the scheduler. Source polls the directory and reports the
// whole set whenever a file appears, changes or goes; Parse turns one
// manifest into the pod the kubelet runs, named <name>-<node>, with a UID
// and the annotation kubernetes.io/config.hash derived from the file's
// content, the node and the path (so editing a file makes a new pod, and
// the old one is stopped), and kubernetes.io/config.source: file.
//
// Mirror builds the mirror pod the kubelet creates in the apiserver so
// the static pod can be seen there: the same pod with
// kubernetes.io/config.mirror set to the hash and owned by the Node.
package staticpods
