package test

import (
	"testing"

	"google.golang.org/protobuf/proto"

	rbacv1 "podline.dev/proto/rbac/v1"
	"podline.dev/services/apiserver/apiservertest"
)

// A default ClusterRole kept in etcd from an earlier version is brought
// back to this version's rules when the apiserver starts, unless its
// autoupdate annotation is "false".
func TestBootstrapPolicyReconciledAtStart(t *testing.T) {
	etcd := apiservertest.StartEtcd(t)
	first := apiservertest.StartSecureOn(t, etcd)
	ctx := ctxFor(t)
	roles := first.API.Registry("clusterroles.rbac.authorization.k8s.io")

	get := func(name string) *rbacv1.ClusterRole {
		t.Helper()
		obj, err := roles.Get(ctx, "", name)
		if err != nil {
			t.Fatal(err)
		}
		return obj.(*rbacv1.ClusterRole)
	}
	want := get("system:kube-controller-manager").GetRules()

	// An older version's narrower roles, one of them pinned by its owner.
	for name, pin := range map[string]bool{"system:kube-controller-manager": false, "system:kube-scheduler": true} {
		r := get(name)
		r.Rules = r.Rules[:1]
		if pin {
			r.Metadata.Annotations["rbac.authorization.kubernetes.io/autoupdate"] = "false"
		}
		if _, err := roles.Update(ctx, "", name, r, false); err != nil {
			t.Fatal(err)
		}
	}
	pinned := get("system:kube-scheduler").GetRules()

	second := apiservertest.StartSecureOn(t, etcd)
	roles = second.API.Registry("clusterroles.rbac.authorization.k8s.io")
	if got := get("system:kube-controller-manager").GetRules(); !rulesEqual(got, want) {
		t.Errorf("system:kube-controller-manager after restart has %d rules, want this version's %d", len(got), len(want))
	}
	if got := get("system:kube-scheduler").GetRules(); !rulesEqual(got, pinned) {
		t.Errorf("a role with autoupdate=false was changed: %d rules, want %d", len(got), len(pinned))
	}
}

func rulesEqual(a, b []*rbacv1.PolicyRule) bool {
	return proto.Equal(&rbacv1.ClusterRole{Rules: a}, &rbacv1.ClusterRole{Rules: b})
}
