package secureserving

import (
	"context"
	"errors"
	"testing"
	"time"

	"podline.dev/pkg/clock"
)

// script answers from a table, fails while err is set, and counts what it
// was asked.
type script struct {
	allowed map[string]bool
	users   map[string]string
	err     error
	asked   int
}

func (s *script) Authorize(_ context.Context, a Attributes) (Decision, error) {
	s.asked++
	return Decision{Allowed: s.allowed[a.User.Name]}, s.err
}

func (s *script) AuthenticateToken(_ context.Context, token string) (User, bool, error) {
	s.asked++
	name, ok := s.users[token]
	return User{Name: name}, ok, s.err
}

// An allow is kept for the authorized TTL, a refusal for the unauthorized
// one, an error not at all; other attributes are another question.
func TestCachedAuthorizerKeepsEachDecisionForItsTTL(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	s := &script{allowed: map[string]bool{"prometheus": true}}
	c := NewCachedAuthorizer(s, clk, 10*time.Second, 2*time.Second)
	ask := func(user, path string) Decision {
		t.Helper()
		d, err := c.Authorize(context.Background(), Attributes{User: User{Name: user}, Verb: "get", Path: path})
		if err != nil && s.err == nil {
			t.Fatal(err)
		}
		return d
	}
	steps := []struct {
		step      time.Duration
		user      string
		path      string
		fail      bool
		allowed   bool
		wantAsked int
	}{
		{0, "prometheus", "/metrics", false, true, 1},
		{9 * time.Second, "prometheus", "/metrics", false, true, 1},
		{0, "prometheus", "/debug/pprof/", false, true, 2},
		{0, "jane", "/metrics", false, false, 3},
		{time.Second, "jane", "/metrics", false, false, 3},
		{time.Second, "jane", "/metrics", false, false, 4}, // a refusal is kept 2 s
		{time.Second, "prometheus", "/metrics", false, true, 5},
		{10 * time.Second, "prometheus", "/metrics", true, false, 6},
		{0, "prometheus", "/metrics", true, false, 7}, // errors are not kept
	}
	for i, st := range steps {
		clk.Step(st.step)
		s.err = nil
		if st.fail {
			s.err = errors.New("apiserver unreachable")
		}
		if d := ask(st.user, st.path); d.Allowed != st.allowed || s.asked != st.wantAsked {
			t.Fatalf("step %d: allowed %v after %d questions; want %v after %d", i, d.Allowed, s.asked, st.allowed, st.wantAsked)
		}
	}
}

func TestCachedTokenAuthenticatorKeepsAnswersEitherWay(t *testing.T) {
	clk := clock.NewFake(time.Unix(1000, 0))
	s := &script{users: map[string]string{"good": "system:serviceaccount:default:default"}}
	c := NewCachedTokenAuthenticator(s, clk, 10*time.Second)
	ctx := context.Background()
	for range 2 {
		if u, ok, err := c.AuthenticateToken(ctx, "good"); !ok || err != nil || u.Name != "system:serviceaccount:default:default" {
			t.Fatalf("%v %v %v", u, ok, err)
		}
		if _, ok, _ := c.AuthenticateToken(ctx, "bad"); ok {
			t.Fatal("a bad token was taken")
		}
	}
	if s.asked != 2 {
		t.Errorf("asked %d times within the TTL, want 2", s.asked)
	}
	clk.Step(10 * time.Second)
	s.err = errors.New("apiserver unreachable")
	for range 2 {
		if _, ok, err := c.AuthenticateToken(ctx, "good"); ok || err == nil {
			t.Fatal("an answer outlived its TTL, or an error was hidden")
		}
	}
	if s.asked != 4 {
		t.Errorf("asked %d, want every failed question asked again", s.asked)
	}
}

// One account's tokens bound to different Pods are different users to an
// authorizer that reads extra: their decisions are kept apart. The order
// of extra's keys does not matter.
func TestCachedAuthorizerKeysByUIDAndExtra(t *testing.T) {
	user := func(uid string, extra ...string) Attributes {
		u := User{Name: "system:serviceaccount:default:web", UID: uid, Extra: map[string][]string{}}
		for i := 0; i+1 < len(extra); i += 2 {
			u.Extra[extra[i]] = []string{extra[i+1]}
		}
		return Attributes{User: u, Verb: "get", Path: "/metrics"}
	}
	a := attributesKey(user("u1", "pod-name", "web-0", "node-name", "n1"))
	if b := attributesKey(user("u1", "node-name", "n1", "pod-name", "web-0")); a != b {
		t.Error("the order of extra changed the key")
	}
	for _, other := range []Attributes{user("u2", "pod-name", "web-0", "node-name", "n1"), user("u1", "pod-name", "web-1", "node-name", "n1"), user("u1")} {
		if attributesKey(other) == a {
			t.Errorf("%+v shares the key of another user", other.User)
		}
	}
}
