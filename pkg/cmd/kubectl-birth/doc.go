// Command kubectl-birth is a kubectl plugin (`kubectl birth`) that prints
// the birth of a Pod as a waterfall in the terminal: one line per step, from
// the apiserver's request and etcd write through the controllers'
// reconciles, the scheduler's cycle and bind, to the kubelet's sandbox, CNI
// ADD, image pull, container start and the Pod's Ready condition.
//
// The pieces: kubeconfig.go and yaml.go read the kubeconfig; apiclient.go
// GETs objects over REST; target.go turns pod/<name> or deploy/<name> into
// Pods; jaeger.go fetches the trace named by a Pod's podline.dev/traceparent
// annotation from Jaeger's query API; steps.go keeps the spans of that Pod
// and names each step; events.go builds the steps from the Pod's Events
// when there is no trace; waterfall.go draws the steps (a pure function of
// its input, tested against golden files).
package main
