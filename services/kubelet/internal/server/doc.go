// Package server is the kubelet's own HTTP(S) endpoint, the one the
// apiserver proxies `kubectl logs` and `kubectl exec` to:
//
//	GET /containerLogs/{namespace}/{pod}/{container}?follow&tailLines&previous&limitBytes
//	GET|POST /exec/{namespace}/{pod}/{container}?command=...&stdin&stdout&stderr&tty
//	GET /healthz
//
// Exec speaks Kubernetes' WebSocket stream protocols (v5.channel.k8s.io
// and v4.channel.k8s.io: one byte of stream ID before each message,
// stdin 0, stdout 1, stderr 2, the exit status as a Status on 3, terminal
// resizes on 4); a request without an upgrade runs the command without
// stdin and answers its output, with the exit code in X-Exit-Code.
//
// TLS is configured in one place, Config: with a certificate and key it
// serves HTTPS, without them plain HTTP (until the cluster's certificates
// are issued to kubelets).
package server
