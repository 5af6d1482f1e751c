package client

import (
	"context"
	"testing"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/codes"
	"google.golang.org/grpc/status"

	"podline.dev/pkg/clock"
)

// countingConn answers every unary call with err and counts them.
type countingConn struct {
	calls int
	err   error
}

func (c *countingConn) Invoke(context.Context, string, any, any, ...grpc.CallOption) error {
	c.calls++
	return c.err
}

func (c *countingConn) NewStream(context.Context, *grpc.StreamDesc, string, ...grpc.CallOption) (grpc.ClientStream, error) {
	return nil, status.Error(codes.Unimplemented, "no streams here")
}

// After the replicas fail, reads skip them for the backoff, which grows
// with each failure and starts over after a success; writes never go
// there.
func TestReadsSkipFailedReplicasForABackoff(t *testing.T) {
	ctx := context.Background()
	api, replicas := &countingConn{}, &countingConn{err: status.Error(codes.Unavailable, "watchcache replica not ready")}
	conn := WithWatchEndpoint(api, replicas, WithReturnBackoff(50*time.Millisecond, 80*time.Millisecond))
	clk := clock.NewFake(time.Unix(1000, 0))
	conn.(*splitConn).clock = clk
	list := func() {
		t.Helper()
		if err := conn.Invoke(ctx, "/podline.core.v1.Pods/List", nil, nil); err != nil {
			t.Fatal(err)
		}
	}
	list()
	if replicas.calls != 1 || api.calls != 1 {
		t.Fatalf("first list: replicas %d, api %d; want one each", replicas.calls, api.calls)
	}
	list()
	if replicas.calls != 1 || api.calls != 2 {
		t.Fatalf("within the backoff: replicas %d, api %d; want the list on api only", replicas.calls, api.calls)
	}
	clk.Step(61 * time.Millisecond) // past 50 ms and its fifth of jitter
	list()
	if replicas.calls != 2 {
		t.Fatalf("after the backoff the replicas were not tried again")
	}
	clk.Step(61 * time.Millisecond) // the second backoff is longer: 80 ms and more
	list()
	if replicas.calls != 2 {
		t.Fatalf("the second backoff was not longer than the first")
	}
	clk.Step(40 * time.Millisecond)
	replicas.err = nil
	list()
	list()
	if replicas.calls != 4 {
		t.Fatalf("replicas %d calls; want both lists on them once they answer", replicas.calls)
	}
	if err := conn.Invoke(ctx, "/podline.core.v1.Pods/Create", nil, nil); err != nil || replicas.calls != 4 {
		t.Fatalf("a write went to the replicas (err %v)", err)
	}
}
