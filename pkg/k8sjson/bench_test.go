package k8sjson

import (
	"encoding/json"
	"os"
	"syscall"
	"testing"
	"time"

	"google.golang.org/protobuf/encoding/protojson"
	"google.golang.org/protobuf/proto"
	corev1 "podline.dev/proto/core/v1"
)

// cpuTime reports the process's CPU time per operation (cpu-ns/op) when
// the benchmark ends: on a shared, busy machine wall time (ns/op) counts the
// waiting too, CPU time much less so.
func cpuTime(b *testing.B) {
	start := rusage()
	b.Cleanup(func() {
		if b.N > 0 {
			b.ReportMetric(float64(rusage()-start)/float64(b.N), "cpu-ns/op")
		}
	})
}

func rusage() time.Duration {
	var ru syscall.Rusage
	if err := syscall.Getrusage(syscall.RUSAGE_SELF, &ru); err != nil {
		return 0
	}
	return time.Duration(ru.Utime.Nano() + ru.Stime.Nano())
}

// typicalPod is a scheduled, running Pod as `kubectl get pod -o json` shows
// it: the object the watch cache and informers move most.
func typicalPod(b *testing.B) (*corev1.Pod, []byte) {
	b.Helper()
	data, err := os.ReadFile("testdata/pod-running.json")
	if err != nil {
		b.Fatal(err)
	}
	pod := &corev1.Pod{}
	if _, err := Unmarshal(data, pod); err != nil {
		b.Fatal(err)
	}
	compact, err := Marshal(pod)
	if err != nil {
		b.Fatal(err)
	}
	return pod, compact
}

func BenchmarkMarshalPod(b *testing.B) {
	pod, compact := typicalPod(b)
	b.SetBytes(int64(len(compact)))
	b.ReportAllocs()
	cpuTime(b)
	for b.Loop() {
		if _, err := Marshal(pod); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkMarshalAppendPod(b *testing.B) {
	pod, compact := typicalPod(b)
	b.SetBytes(int64(len(compact)))
	b.ReportAllocs()
	cpuTime(b)
	buf := make([]byte, 0, 2*len(compact))
	for b.Loop() {
		var err error
		if buf, err = MarshalAppend(buf[:0], pod); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkUnmarshalPod(b *testing.B) {
	_, compact := typicalPod(b)
	b.SetBytes(int64(len(compact)))
	b.ReportAllocs()
	cpuTime(b)
	for b.Loop() {
		if _, err := Unmarshal(compact, &corev1.Pod{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkTypeMetaPod(b *testing.B) {
	_, compact := typicalPod(b)
	b.SetBytes(int64(len(compact)))
	b.ReportAllocs()
	cpuTime(b)
	for b.Loop() {
		if _, _, err := TypeMeta(compact); err != nil {
			b.Fatal(err)
		}
	}
}

// For scale: protojson on the same message (a different JSON shape),
// encoding/json reading the same bytes into a map, and protobuf's binary
// codec, which Marshal's wire walk builds on.
func BenchmarkReferenceProtojsonMarshalPod(b *testing.B) {
	pod, _ := typicalPod(b)
	b.ReportAllocs()
	cpuTime(b)
	for b.Loop() {
		if _, err := protojson.Marshal(pod); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReferenceProtojsonUnmarshalPod(b *testing.B) {
	pod, _ := typicalPod(b)
	data, _ := protojson.Marshal(pod)
	b.ReportAllocs()
	cpuTime(b)
	for b.Loop() {
		if err := protojson.Unmarshal(data, &corev1.Pod{}); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReferenceEncodingJSONUnmarshalAny(b *testing.B) {
	_, compact := typicalPod(b)
	b.ReportAllocs()
	cpuTime(b)
	for b.Loop() {
		var v map[string]any
		if err := json.Unmarshal(compact, &v); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReferenceProtoMarshalPod(b *testing.B) {
	pod, _ := typicalPod(b)
	b.ReportAllocs()
	cpuTime(b)
	buf := make([]byte, 0, 4096)
	for b.Loop() {
		var err error
		if buf, err = (proto.MarshalOptions{}).MarshalAppend(buf[:0], pod); err != nil {
			b.Fatal(err)
		}
	}
}

func BenchmarkReferenceProtoUnmarshalPod(b *testing.B) {
	pod, _ := typicalPod(b)
	data, _ := proto.Marshal(pod)
	b.ReportAllocs()
	cpuTime(b)
	for b.Loop() {
		if err := proto.Unmarshal(data, &corev1.Pod{}); err != nil {
			b.Fatal(err)
		}
	}
}
