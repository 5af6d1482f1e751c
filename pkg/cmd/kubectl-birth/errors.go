package main

import "errors"

var (
	// errNoTrace: Jaeger holds no trace of that id (or the Pod names none).
	errNoTrace = errors.New("no trace")
	// errJaegerUnreachable: the query API could not be asked or answered badly.
	errJaegerUnreachable = errors.New("jaeger query API unreachable")
	// errUsage: the command line names no pod/<name> or deploy/<name>.
	errUsage = errors.New("usage: kubectl birth (pod|deploy)/NAME [-n NAMESPACE] [--kubeconfig FILE] [--jaeger URL] [--jaeger-ca-file FILE] [--all-pods] [--all-spans]")
	// errNoPods: the Deployment has no Pods yet.
	errNoPods = errors.New("no pods")
	// errKubeconfig: the kubeconfig lacks a piece the plugin needs.
	errKubeconfig = errors.New("kubeconfig")
)
