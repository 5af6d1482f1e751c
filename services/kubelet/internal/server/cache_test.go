package server

import (
	"context"
	"errors"
	"testing"
	"time"

	"podline.dev/pkg/clock"
)

// counter allows users in allow, fails while failing is set, and counts
// the questions that reach it.
type counter struct {
	calls   int
	allow   map[string]bool
	failing bool
}

func (c *counter) Authorize(_ context.Context, a Attributes) (bool, string, error) {
	c.calls++
	if c.failing {
		return false, "", errors.New("apiserver unreachable")
	}
	return c.allow[a.User.Name], "", nil
}

func TestCachedAuthorizerRemembersAllowsLongerThanRefusals(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC))
	next := &counter{allow: map[string]bool{"apiserver": true}}
	z := NewCachedAuthorizer(next, clk, DefaultAllowedTTL, DefaultDeniedTTL)
	ctx := context.Background()
	ask := func(user, verb string) bool {
		ok, _, err := z.Authorize(ctx, Attributes{User: User{Name: user, Groups: []string{"g"}}, Verb: verb, Resource: "nodes", Subresource: "proxy", Name: "n"})
		if err != nil {
			t.Fatal(err)
		}
		return ok
	}
	steps := []struct {
		step      time.Duration
		user      string
		verb      string
		want      bool
		wantCalls int
	}{
		{0, "apiserver", "get", true, 1},
		{4 * time.Minute, "apiserver", "get", true, 1},              // allowed: 5 min
		{0, "apiserver", "create", true, 2},                         // another verb is another question
		{0, "alice", "get", false, 3},                               // refused
		{29 * time.Second, "alice", "get", false, 3},                // refused: 30 s
		{time.Second, "alice", "get", false, 4},                     // asked again
		{time.Minute - 29*time.Second, "apiserver", "get", true, 5}, // 5 min after the first question
	}
	for i, s := range steps {
		clk.Step(s.step)
		if got := ask(s.user, s.verb); got != s.want || next.calls != s.wantCalls {
			t.Fatalf("step %d (%s %s): allowed %v after %d calls, want %v after %d", i, s.user, s.verb, got, next.calls, s.want, s.wantCalls)
		}
	}
}

func TestCachedAuthorizerDoesNotRememberErrors(t *testing.T) {
	next := &counter{allow: map[string]bool{"apiserver": true}, failing: true}
	z := NewCachedAuthorizer(next, clock.NewFake(time.Now()), DefaultAllowedTTL, DefaultDeniedTTL)
	a := Attributes{User: User{Name: "apiserver"}, Verb: "get", Resource: "nodes", Subresource: "proxy"}
	if _, _, err := z.Authorize(context.Background(), a); err == nil {
		t.Fatal("no error")
	}
	next.failing = false
	if ok, _, err := z.Authorize(context.Background(), a); !ok || err != nil || next.calls != 2 {
		t.Fatalf("after the apiserver is back: %v %v after %d calls", ok, err, next.calls)
	}
}
