// Package admission decides on the node whether a pod may run there, as
// the kubelet's admit handlers do before a pod's first sync: its requests
// must fit in the node's allocatable beside the pods already admitted
// (reason OutOfcpu, OutOfmemory, OutOfpods, ...) and its hostPorts must
// be free (reason NodePorts). A rejected pod is Failed with that reason
// and never started. Admit is a pure function.
package admission
