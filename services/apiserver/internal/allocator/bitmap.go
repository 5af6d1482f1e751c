package allocator

import (
	"math/bits"
	"math/rand/v2"
)

// Bitmap records which offsets of a range of Size are allocated. Offsets
// below Static form the static band: dynamic allocation (Next) takes from
// them only when every offset above is taken. A Bitmap is not safe for
// concurrent use; Allocator serializes it.
type Bitmap struct {
	size, static int
	words        []uint64
	count        int
}

// NewBitmap returns an empty bitmap of size offsets with a static band of
// static offsets.
func NewBitmap(size, static int) *Bitmap {
	return &Bitmap{size: size, static: min(static, size), words: make([]uint64, (size+63)/64)}
}

// StaticBand is kube-apiserver's size of the band reserved for requested
// values in a range of size: size/step bounded to [lo, hi], or nothing when
// the range is smaller than lo.
func StaticBand(size, lo, hi, step int) int {
	if size < lo {
		return 0
	}
	return min(max(lo, size/step), hi)
}

// Size is the number of offsets.
func (b *Bitmap) Size() int { return b.size }

// Used is the number of allocated offsets.
func (b *Bitmap) Used() int { return b.count }

// Has reports whether offset i is allocated.
func (b *Bitmap) Has(i int) bool {
	return i >= 0 && i < b.size && b.words[i/64]&(1<<(i%64)) != 0
}

// Set allocates offset i and reports whether it was free.
func (b *Bitmap) Set(i int) bool {
	if i < 0 || i >= b.size || b.Has(i) {
		return false
	}
	b.words[i/64] |= 1 << (i % 64)
	b.count++
	return true
}

// Clear frees offset i.
func (b *Bitmap) Clear(i int) {
	if b.Has(i) {
		b.words[i/64] &^= 1 << (i % 64)
		b.count--
	}
}

// Next allocates a free offset, scanning from a random start above the
// static band and falling back to the static band when that is full.
func (b *Bitmap) Next(rnd *rand.Rand) (int, bool) {
	if i, ok := b.scan(b.static, b.size, rnd); ok {
		return i, true
	}
	return b.scan(0, b.static, rnd)
}

// scan finds and sets a free offset in [lo, hi), starting at a random one
// and wrapping around.
func (b *Bitmap) scan(lo, hi int, rnd *rand.Rand) (int, bool) {
	n := hi - lo
	if n <= 0 {
		return 0, false
	}
	start := lo + rnd.IntN(n)
	if i, ok := b.firstFree(start, hi); ok {
		b.Set(i)
		return i, true
	}
	if i, ok := b.firstFree(lo, start); ok {
		b.Set(i)
		return i, true
	}
	return 0, false
}

// firstFree is the lowest free offset in [from, to).
func (b *Bitmap) firstFree(from, to int) (int, bool) {
	for i := from; i < to; {
		w := ^b.words[i/64] >> (i % 64)
		if w == 0 {
			i += 64 - i%64
			continue
		}
		j := i + bits.TrailingZeros64(w)
		if j < to {
			return j, true
		}
		return 0, false
	}
	return 0, false
}

// Snapshot is the bitmap as kube-apiserver stores it: the big-endian bytes
// of the integer whose bit i is offset i, without leading zero bytes.
func (b *Bitmap) Snapshot() []byte {
	n := len(b.words) * 8
	for n > 0 && b.byteAt(n-1) == 0 {
		n--
	}
	out := make([]byte, n)
	for j := range n {
		out[n-1-j] = b.byteAt(j)
	}
	return out
}

// byteAt is bits 8j..8j+7.
func (b *Bitmap) byteAt(j int) byte { return byte(b.words[j/8] >> (8 * (j % 8))) }

// Restore replaces the bitmap's contents with a snapshot; bits beyond the
// size are dropped.
func (b *Bitmap) Restore(data []byte) {
	clear(b.words)
	b.count = 0
	for k, v := range data {
		j := len(data) - 1 - k // byte j from the low end
		for bit := range 8 {
			if v&(1<<bit) != 0 {
				b.Set(8*j + bit)
			}
		}
	}
}

// Clone returns an independent copy.
func (b *Bitmap) Clone() *Bitmap {
	c := *b
	c.words = append([]uint64(nil), b.words...)
	return &c
}
