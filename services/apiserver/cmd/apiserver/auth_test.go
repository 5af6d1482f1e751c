package main

import (
	"strings"
	"testing"

	"podline.dev/services/apiserver/internal/audit"
	"podline.dev/services/apiserver/internal/authz"
	"podline.dev/services/apiserver/internal/request"
)

// The audit policy compose gives the apiserver: health probes, events and
// lease heartbeats are not logged; secrets, configmaps and tokens at
// Metadata; writes of Pods and Deployments with their object; the rest at
// Metadata.
func TestComposeAuditPolicy(t *testing.T) {
	f := authFlags{auditLogPath: "-", auditPolicy: "../../config/audit-policy.yaml"}
	p, err := audit.LoadPolicy(f.auditPolicy)
	if err != nil {
		t.Fatal(err)
	}
	if _, closer, err := f.auditLogger(); err != nil {
		t.Fatalf("--audit-policy-file with --audit-log-path=-: %v", err)
	} else {
		closer.Close()
	}
	admin := &request.User{Name: "kubernetes-admin", Groups: []string{request.Masters}}
	node := &request.User{Name: "system:node:worker-1", Groups: []string{request.Nodes}}
	res := func(u *request.User, verb, group, resource, sub string) authz.Attributes {
		return authz.Attributes{User: u, Verb: verb, ResourceRequest: true, APIGroup: group, Resource: resource, Subresource: sub, Namespace: "default", Name: "x"}
	}
	tests := []struct {
		name string
		req  authz.Attributes
		want audit.Level
	}{
		{"readyz probe", authz.Attributes{Verb: "get", Path: "/readyz"}, audit.LevelNone},
		{"livez with a check", authz.Attributes{Verb: "get", Path: "/livez/etcd"}, audit.LevelNone},
		{"discovery", authz.Attributes{User: admin, Verb: "get", Path: "/apis"}, audit.LevelMetadata},
		{"an event", res(node, "create", "", "events", ""), audit.LevelNone},
		{"a node heartbeat", res(node, "update", "coordination.k8s.io", "leases", ""), audit.LevelNone},
		{"a lease deleted", res(admin, "delete", "coordination.k8s.io", "leases", ""), audit.LevelMetadata},
		{"a secret written", res(admin, "create", "", "secrets", ""), audit.LevelMetadata},
		{"a configmap read", res(node, "get", "", "configmaps", ""), audit.LevelMetadata},
		{"a pod's token", res(node, "create", "", "serviceaccounts", "token"), audit.LevelMetadata},
		{"a token review", res(node, "create", "authentication.k8s.io", "tokenreviews", ""), audit.LevelMetadata},
		{"a pod created", res(admin, "create", "", "pods", ""), audit.LevelRequest},
		{"a deployment patched", res(admin, "patch", "apps", "deployments", ""), audit.LevelRequest},
		{"a deployment scaled", res(admin, "update", "apps", "deployments", "scale"), audit.LevelRequest},
		{"a pod's status", res(node, "patch", "", "pods", "status"), audit.LevelMetadata},
		{"pods listed", res(admin, "list", "", "pods", ""), audit.LevelMetadata},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got, omit := p.LevelFor(tt.req); got != tt.want || (got != audit.LevelNone && (len(omit) != 1 || omit[0] != audit.StageRequestReceived)) {
				t.Fatalf("level %s omitting %v, want %s omitting RequestReceived", got, omit, tt.want)
			}
		})
	}
}

// Rotation applies to a file: asked of standard output, or negative, the
// apiserver refuses to start rather than ignore it.
func TestAuditRotationFlags(t *testing.T) {
	for name, f := range map[string]authFlags{
		"standard output": {auditLogPath: "-", auditRotation: audit.Rotation{MaxSizeMB: 100}},
		"negative size":   {auditLogPath: t.TempDir() + "/audit.log", auditRotation: audit.Rotation{MaxSizeMB: -1}},
	} {
		if _, _, err := f.auditLogger(); err == nil || !strings.Contains(err.Error(), "--audit-log-max") {
			t.Errorf("%s: %v", name, err)
		}
	}
	f := authFlags{auditLogPath: t.TempDir() + "/audit.log", auditRotation: audit.Rotation{MaxSizeMB: 1, MaxBackups: 3}}
	_, closer, err := f.auditLogger()
	if err != nil {
		t.Fatal(err)
	}
	closer.Close()
}
