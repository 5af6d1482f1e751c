package rootcacert

import (
	"context"
	"maps"
	"testing"

	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

const ca = "-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n"

func newFixture(t *testing.T) (*ctltest.Fixture, *Controller) {
	t.Helper()
	f := ctltest.NewFixture(t)
	f.Context.Options.RootCA = ca
	rc, err := New(f.Context)
	if err != nil {
		t.Fatal(err)
	}
	return f, rc
}

func published(t *testing.T, f *ctltest.Fixture, ns string) *corev1.ConfigMap {
	t.Helper()
	o := f.Conn.Object("configmaps", ns, ConfigMapName)
	if o == nil {
		t.Fatalf("no %s in %s", ConfigMapName, ns)
	}
	return o.(*corev1.ConfigMap)
}

func TestNamespaceGetsTheRootCA(t *testing.T) {
	f, rc := newFixture(t)
	f.Add(ctltest.Namespace("team"))
	if err := rc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites("create configmaps team/kube-root-ca.crt")
	cm := published(t, f, "team")
	if !maps.Equal(cm.Data, map[string]string{"ca.crt": ca}) || cm.Metadata.Annotations[DescriptionAnnotation] != Description {
		t.Errorf("published %v %v", cm.Data, cm.Metadata.Annotations)
	}
}

func TestEditedConfigMapIsRepaired(t *testing.T) {
	f, rc := newFixture(t)
	edited := &corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: ConfigMapName, Namespace: "team",
		Annotations: map[string]string{DescriptionAnnotation: Description, "owner": "me"}},
		Data: map[string]string{"ca.crt": "forged", "extra": "x"}}
	f.Add(ctltest.Namespace("team"), edited)
	if err := rc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites("update configmaps team/kube-root-ca.crt")
	cm := published(t, f, "team")
	if !maps.Equal(cm.Data, map[string]string{"ca.crt": ca}) || cm.Metadata.Annotations["owner"] != "me" {
		t.Errorf("repaired to %v %v", cm.Data, cm.Metadata.Annotations)
	}
}

func TestCurrentConfigMapIsLeftAlone(t *testing.T) {
	f, rc := newFixture(t)
	f.Add(ctltest.Namespace("team"), &corev1.ConfigMap{Metadata: &metav1.ObjectMeta{Name: ConfigMapName, Namespace: "team",
		Annotations: map[string]string{DescriptionAnnotation: Description}}, Data: map[string]string{"ca.crt": ca}})
	if err := rc.Sync(context.Background(), "team"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites()
}

func TestTerminatingNamespaceGetsNothing(t *testing.T) {
	f, rc := newFixture(t)
	ns := ctltest.Namespace("going")
	ns.Metadata.DeletionTimestamp = &metav1.Time{Seconds: ctltest.Epoch.Unix()}
	f.Add(ns)
	if err := rc.Sync(context.Background(), "going"); err != nil {
		t.Fatal(err)
	}
	f.ExpectWrites()
}
