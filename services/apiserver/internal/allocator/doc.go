// Package allocator hands out Service ClusterIPs and NodePorts from the
// ranges the apiserver is started with (--service-cluster-ip-range,
// --service-node-port-range).
//
// podline keeps kube-apiserver's legacy layout: one RangeAllocation per
// range, at /registry/ranges/serviceips and /registry/ranges/servicenodeports,
// holding the range ("10.96.0.0/12", "30000-32767") and a bitmap whose bit i
// is offset i of the range (big-endian bytes of the integer, as
// kube-apiserver writes them). Every change reads the key and writes it back
// with a transaction on the mod revision it read, so allocations from many
// goroutines or several apiservers never hand out one address twice; the
// loser of a race reads again and retries.
//
// Why the bitmaps and not the ServiceCIDR/IPAddress objects of
// networking.k8s.io/v1 that kube-apiserver 1.33+ uses: podline serves no
// networking.k8s.io group, one range per family is all its flags describe,
// and a bitmap is one etcd key per range whose compare-and-swap is the whole
// concurrency story, where IPAddress objects need their own resource, a
// ServiceCIDR controller and a cleanup controller. The bitmaps are also what
// NodePorts use in kube-apiserver today, so both allocators share one core.
//
// Bitmap is the pure core (no I/O): offsets, a static band at the bottom of
// each range that dynamic allocation uses only when the rest is full (as
// kube-apiserver's ServiceIPStaticSubrange and ServiceNodePortStaticSubrange
// do, so 10.96.0.10 stays free for kube-dns), and the snapshot encoding.
// IPRange and PortRange map addresses to offsets. Allocator puts a Bitmap
// behind a Store (etcd, or the in-memory one for tests). Repair rebuilds a
// bitmap from what the stored Services use, freeing leaks after a crash.
package allocator
