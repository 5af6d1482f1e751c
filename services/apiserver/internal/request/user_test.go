package request

import (
	"context"
	"testing"
)

func TestUserRoundTrip(t *testing.T) {
	if _, ok := UserFrom(context.Background()); ok {
		t.Fatal("empty context carries a user")
	}
	u := &User{Name: "system:node:worker-1", Groups: []string{Nodes, AllAuthenticated}}
	got, ok := UserFrom(WithUser(context.Background(), u))
	if !ok || got.Name != u.Name {
		t.Fatalf("UserFrom = %v, %v", got, ok)
	}
	if !got.InGroup(Nodes) || got.InGroup(Masters) {
		t.Fatalf("InGroup wrong for %v", got.Groups)
	}
}

func TestInfoRoundTrip(t *testing.T) {
	if (InfoFrom(context.Background()) != Info{}) {
		t.Fatal("empty context carries info")
	}
	i := Info{URI: "/api/v1/pods", SourceIP: "10.0.0.1", UserAgent: "kubectl"}
	if got := InfoFrom(WithInfo(context.Background(), i)); got.URI != i.URI || got.SourceIP != i.SourceIP || got.UserAgent != i.UserAgent || got.Impersonator != nil {
		t.Fatalf("InfoFrom = %+v", got)
	}
}
