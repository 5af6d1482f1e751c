package token

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"testing"
	"time"

	"podline.dev/pkg/clock"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// fakeRequester issues "t1", "t2", ... living what was asked (or cap).
type fakeRequester struct {
	clk    clock.Clock
	issued int
	cap    int64
	err    error
	asked  []Request
}

func (f *fakeRequester) RequestToken(_ context.Context, r Request) (Token, error) {
	f.asked = append(f.asked, r)
	if f.err != nil {
		return Token{}, f.err
	}
	f.issued++
	secs := r.ExpirationSeconds
	if f.cap > 0 && secs > f.cap {
		secs = f.cap
	}
	return Token{Value: fmt.Sprintf("t%d", f.issued), Expiration: f.clk.Now().Add(time.Duration(secs) * time.Second), ExpirationSeconds: secs}, nil
}

func quiet() *slog.Logger { return slog.New(slog.NewTextHandler(io.Discard, nil)) }

func webPod() *corev1.Pod {
	return &corev1.Pod{Metadata: &metav1.ObjectMeta{Namespace: "default", Name: "web", Uid: "uid-1"}, Spec: &corev1.PodSpec{}}
}

func TestATokenIsRenewedAtEightyPercentOfItsLife(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	req := &fakeRequester{clk: clk}
	m := NewManager(req, clk, quiet())
	get := func() string {
		t.Helper()
		tok, err := m.PodToken(context.Background(), webPod(), "", 3607)
		if err != nil {
			t.Fatal(err)
		}
		return string(tok)
	}
	steps := []struct {
		after time.Duration
		want  string
	}{
		{0, "t1"},
		{time.Hour - 15*time.Minute, "t1"}, // 45 min: under 80% of 3607 s
		{48*time.Minute + 6*time.Second - 45*time.Minute, "t2"}, // 48m06s: past 80% (2885.6 s)
		{time.Minute, "t2"},
	}
	for i, s := range steps {
		clk.Step(s.after)
		if got := get(); got != s.want {
			t.Fatalf("step %d (%v): token %s, want %s", i, clk.Now(), got, s.want)
		}
	}
	r := req.asked[0]
	if r.Namespace != "default" || r.ServiceAccount != "default" || r.PodName != "web" || r.PodUID != "uid-1" || r.ExpirationSeconds != 3607 || r.Audiences != nil {
		t.Fatalf("request %+v", r)
	}
}

func TestATokenIsRenewedWhenADayOld(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	m := NewManager(&fakeRequester{clk: clk}, clk, quiet())
	r := Request{Namespace: "default", ServiceAccount: "default", PodUID: "u", ExpirationSeconds: 7 * 24 * 3600}
	first, _ := m.Get(context.Background(), r)
	clk.Step(24*time.Hour - time.Second)
	if tok, _ := m.Get(context.Background(), r); tok.Value != first.Value {
		t.Fatalf("renewed before a day: %s", tok.Value)
	}
	clk.Step(time.Second)
	if tok, _ := m.Get(context.Background(), r); tok.Value == first.Value {
		t.Fatal("a day-old token was not renewed")
	}
}

func TestAShortenedLifetimeIsWhatCounts(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	m := NewManager(&fakeRequester{clk: clk, cap: 600}, clk, quiet())
	r := Request{Namespace: "default", ServiceAccount: "default", PodUID: "u", ExpirationSeconds: 3607}
	first, _ := m.Get(context.Background(), r)
	clk.Step(8 * time.Minute) // 80% of the 600 s granted
	if tok, _ := m.Get(context.Background(), r); tok.Value == first.Value {
		t.Fatal("not renewed at 80% of the granted lifetime")
	}
}

func TestAFailedRenewalServesTheTokenUntilItExpires(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	req := &fakeRequester{clk: clk}
	m := NewManager(req, clk, quiet())
	r := Request{Namespace: "default", ServiceAccount: "default", PodUID: "u", ExpirationSeconds: 3600}
	if _, err := m.Get(context.Background(), r); err != nil {
		t.Fatal(err)
	}
	req.err = errors.New("apiserver down")
	clk.Step(50 * time.Minute)
	if tok, err := m.Get(context.Background(), r); err != nil || tok.Value != "t1" {
		t.Fatalf("during the outage: %v, %v", tok, err)
	}
	clk.Step(10 * time.Minute)
	if _, err := m.Get(context.Background(), r); err == nil {
		t.Fatal("an expired token was served")
	}
	req.err = nil
	if tok, err := m.Get(context.Background(), r); err != nil || tok.Value != "t2" {
		t.Fatalf("after the outage: %v, %v", tok, err)
	}
}

func TestEachPodAudienceAndLifetimeHasItsOwnToken(t *testing.T) {
	clk := clock.NewFake(time.Date(2026, 11, 30, 12, 0, 0, 0, time.UTC))
	req := &fakeRequester{clk: clk}
	m := NewManager(req, clk, quiet())
	pod := webPod()
	pod.Spec.ServiceAccountName = "builder"
	a, _ := m.PodToken(context.Background(), pod, "", 3607)
	b, _ := m.PodToken(context.Background(), pod, "vault", 3607)
	if string(a) == string(b) || req.asked[1].ServiceAccount != "builder" || len(req.asked[1].Audiences) != 1 || req.asked[1].Audiences[0] != "vault" {
		t.Fatalf("tokens %s %s, asked %+v", a, b, req.asked)
	}
	m.ForgetPod("uid-1")
	if c, _ := m.PodToken(context.Background(), pod, "", 3607); string(c) == string(a) {
		t.Fatal("a forgotten pod's token was served")
	}
}
