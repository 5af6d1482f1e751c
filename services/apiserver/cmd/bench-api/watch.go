package main

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"sync"
	"sync/atomic"
	"syscall"
	"time"

	"google.golang.org/grpc"
	"google.golang.org/grpc/credentials/insecure"
	"google.golang.org/grpc/encoding"
	"google.golang.org/grpc/mem"
	"google.golang.org/protobuf/encoding/protowire"

	"podline.dev/pkg/client"
	"podline.dev/pkg/watch"
	corev1 "podline.dev/proto/core/v1"
	metav1 "podline.dev/proto/meta/v1"
)

// delays is what one watch-delay run measured.
type delays struct {
	decoded              bool
	p50, p99             time.Duration
	measured, deliveries int
	// cpu is the process's CPU time (apiserver and watchers) per
	// delivery, and the cores that takes at the run's delivery rate.
	cpu   time.Duration
	cores float64
}

func (d delays) String() string {
	how := "event bytes received (name read off the wire)"
	if d.decoded {
		how = "event decoded by the typed client            "
	}
	return fmt.Sprintf("  write acknowledged -> %s  p50 %8v  p99 %8v  (%d of %d deliveries; %.1f µs CPU each, %.1f cores at this rate)  (target p99 < 100ms)",
		how, d.p50.Round(100*time.Microsecond), d.p99.Round(100*time.Microsecond), d.measured, d.deliveries,
		float64(d.cpu.Nanoseconds())/1e3, d.cores)
}

// watchDelay opens watchers on pods over conns connections of their own,
// writes at rate for seconds through conn, and measures, per delivery, the
// time from the write's acknowledgement to the event's arrival. With
// decode the watchers are the typed client, each event unmarshaled into a
// Pod; without, they read each event's bytes and pick the pod's name out
// of them, so that the figure is the apiserver's and the transport's, not
// the cost of a thousand clients decoding on the apiserver's two cores.
func watchDelay(ctx context.Context, conn *grpc.ClientConn, addr string, watchers, conns, rate, seconds int, decode bool) (delays, error) {
	pods := client.Pods(conn)
	clients := make([]*grpc.ClientConn, conns)
	for i := range clients {
		c, err := grpc.NewClient(addr, grpc.WithTransportCredentials(insecure.NewCredentials()))
		if err != nil {
			return delays{}, err
		}
		defer c.Close()
		clients[i] = c
	}
	_, lm, err := pods.List(ctx, &metav1.ListRequest{Namespace: "kube-public"})
	if err != nil {
		return delays{}, err
	}
	// Times are since t0, and receipts hold no pointers: with millions of
	// them the bench's own garbage collection stays out of the figures.
	t0 := time.Now()
	total := rate * seconds
	acked := make([]atomic.Int64, total) // by sequence number: 1 + time acknowledged
	var mu sync.Mutex
	var receipts []receipt
	wctx, wcancel := context.WithCancel(ctx)
	defer wcancel()
	var wg sync.WaitGroup
	from := &metav1.ListRequest{Namespace: "kube-public", ResourceVersion: lm.GetResourceVersion()}
	prefix := fmt.Sprintf("w%d-", time.Now().UnixNano()%1e6)
	seq := func(name []byte) int { return sequence(prefix, name) }
	for i := range watchers {
		recv := rawAdds
		if decode {
			recv = decodedAdds
		}
		next, err := recv(wctx, clients[i%conns], from, seq)
		if err != nil {
			return delays{}, err
		}
		wg.Go(func() {
			var local []receipt
			for {
				n, ok := next()
				if !ok {
					break
				}
				if n >= 0 {
					local = append(local, receipt{int32(n), time.Since(t0)})
				}
			}
			mu.Lock()
			receipts = append(receipts, local...)
			mu.Unlock()
		})
	}
	cpu0 := processCPU()
	tick := time.NewTicker(time.Second / time.Duration(rate))
	for i := range total {
		<-tick.C
		p := benchPod(fmt.Sprintf("%s%06d", prefix, i), "watch")
		p.Metadata.Namespace = "kube-public"
		go func() {
			if _, err := pods.Create(ctx, p); err == nil {
				acked[i].Store(1 + int64(time.Since(t0)))
			}
		}()
	}
	tick.Stop()
	time.Sleep(2 * time.Second)
	wcancel()
	wg.Wait()
	used := processCPU() - cpu0
	// An event can arrive before its writer hears the acknowledgement: that
	// delivery took no time after the ack.
	var ds []time.Duration
	for _, r := range receipts {
		if t := acked[r.seq].Load(); t > 0 {
			ds = append(ds, max(r.at-time.Duration(t-1), 0))
		}
	}
	if len(ds) == 0 {
		return delays{}, errors.New("no events delivered")
	}
	sort.Slice(ds, func(i, j int) bool { return ds[i] < ds[j] })
	return delays{decoded: decode, p50: ds[len(ds)/2], p99: ds[len(ds)*99/100], measured: len(ds), deliveries: watchers * total,
		cpu: used / time.Duration(len(ds)), cores: used.Seconds() / float64(len(ds)) * float64(watchers*rate)}, nil
}

// processCPU is the CPU time this process has used, user and system.
func processCPU() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// receipt is one delivery: the pod's sequence number and when it arrived.
type receipt struct {
	seq int32
	at  time.Duration
}

// sequence is the number a pod named prefix+%06d carries, or -1 for
// another name.
func sequence(prefix string, name []byte) int {
	if len(name) != len(prefix)+6 || string(name[:len(prefix)]) != prefix {
		return -1
	}
	n := 0
	for _, c := range name[len(prefix):] {
		if c < '0' || c > '9' {
			return -1
		}
		n = n*10 + int(c-'0')
	}
	return n
}

// decodedAdds watches through the typed client; next returns seq of the
// name of each ADDED pod until the watch ends.
func decodedAdds(ctx context.Context, conn *grpc.ClientConn, from *metav1.ListRequest, seq func([]byte) int) (next func() (int, bool), err error) {
	w, err := client.Pods(conn).Watch(ctx, from)
	if err != nil {
		return nil, err
	}
	return func() (int, bool) {
		for ev := range w.ResultChan() {
			if ev.Type == watch.Added {
				return seq([]byte(ev.Object.GetMetadata().GetName())), true
			}
		}
		return 0, false
	}, nil
}

// The field numbers rawAdds reads: PodWatchEvent.type and .object,
// Pod.metadata, ObjectMeta.name.
var (
	eventType   = fieldNumber((&corev1.PodWatchEvent{}).ProtoReflect().Descriptor().Fields().ByName("type").Number())
	eventObject = fieldNumber((&corev1.PodWatchEvent{}).ProtoReflect().Descriptor().Fields().ByName("object").Number())
	podMeta     = fieldNumber((&corev1.Pod{}).ProtoReflect().Descriptor().Fields().ByName("metadata").Number())
	metaName    = fieldNumber((&metav1.ObjectMeta{}).ProtoReflect().Descriptor().Fields().ByName("name").Number())
)

type fieldNumber = protowire.Number

// rawAdds opens the same gRPC watch with a codec that keeps each message's
// bytes; next returns seq of the name of each ADDED pod, read off the wire.
func rawAdds(ctx context.Context, conn *grpc.ClientConn, from *metav1.ListRequest, seq func([]byte) int) (next func() (int, bool), err error) {
	stream, err := conn.NewStream(ctx, &grpc.StreamDesc{ServerStreams: true}, "/podline.core.v1.Pods/Watch", grpc.ForceCodecV2(rawCodec{}))
	if err != nil {
		return nil, err
	}
	if err := stream.SendMsg(from); err != nil {
		return nil, err
	}
	if err := stream.CloseSend(); err != nil {
		return nil, err
	}
	return func() (int, bool) {
		for {
			var b []byte
			if err := stream.RecvMsg(&b); err != nil {
				return 0, false
			}
			if string(field(b, eventType)) == string(watch.Added) {
				return seq(field(field(field(b, eventObject), podMeta), metaName)), true
			}
		}
	}, nil
}

// field is the first length-delimited field num of the message b.
func field(b []byte, num fieldNumber) []byte {
	for len(b) > 0 {
		n, typ, l := protowire.ConsumeTag(b)
		if l < 0 {
			return nil
		}
		b = b[l:]
		if typ == protowire.BytesType && n == num {
			v, _ := protowire.ConsumeBytes(b)
			return v
		}
		l = protowire.ConsumeFieldValue(n, typ, b)
		if l < 0 {
			return nil
		}
		b = b[l:]
	}
	return nil
}

// rawCodec sends proto messages and receives any message as its bytes.
type rawCodec struct{}

func (rawCodec) Marshal(v any) (mem.BufferSlice, error) {
	return encoding.GetCodecV2("proto").Marshal(v)
}

func (rawCodec) Unmarshal(data mem.BufferSlice, v any) error {
	*v.(*[]byte) = data.Materialize()
	return nil
}

func (rawCodec) Name() string { return "proto" }
