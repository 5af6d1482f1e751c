package watchstream

import (
	"errors"
	"reflect"
	"testing"

	"podline.dev/proto/apis"
)

func TestMessageRoundTrip(t *testing.T) {
	for _, m := range []Message{
		{Kind: KindEvent, Type: "MODIFIED", Revision: 1234567, Sequence: 42, Epoch: "e1", Object: []byte{1, 2, 3}, Published: 1700000000000000000},
		{Kind: KindProgress, Revision: 99, Sequence: 1, Epoch: "e2"},
		{Kind: KindReset, Revision: 7, Sequence: 3, Epoch: "e3"},
	} {
		var got Message
		if err := got.Unmarshal(m.Marshal()); err != nil {
			t.Fatalf("Unmarshal(%+v): %v", m, err)
		}
		if len(m.Object) == 0 {
			m.Object = nil
		}
		if !reflect.DeepEqual(got, m) {
			t.Errorf("round trip = %+v, want %+v", got, m)
		}
	}
}

func TestUnmarshalRejectsGarbage(t *testing.T) {
	var m Message
	for _, b := range [][]byte{{0xff}, {0x08}, {0x08, 0x09}, {}} {
		if err := m.Unmarshal(b); !errors.Is(err, ErrMalformed) {
			t.Errorf("Unmarshal(%x) = %v, want ErrMalformed", b, err)
		}
	}
}

func TestSubjects(t *testing.T) {
	pods := apis.Resource{Group: apis.Group{Name: ""}, Name: "pods", Namespaced: true}
	roles := apis.Resource{Group: apis.Group{Name: "rbac.authorization.k8s.io"}, Name: "clusterroles"}
	for _, tc := range []struct{ got, want string }{
		{Subject(pods, "default"), "podline.watch.core.pods.default"},
		{Subject(roles, ""), "podline.watch.rbac_authorization_k8s_io.clusterroles._cluster"},
		{ResourceFilter(pods), "podline.watch.core.pods.>"},
		{StreamSubjects(), "podline.watch.>"},
	} {
		if tc.got != tc.want {
			t.Errorf("got %q, want %q", tc.got, tc.want)
		}
	}
}
