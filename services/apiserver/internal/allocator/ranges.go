package allocator

import (
	"fmt"
	"net/netip"
	"strconv"
	"strings"
)

// Range maps the values of one kind of allocation (an IP, a port) to the
// offsets of a Bitmap.
type Range interface {
	// String is the range as stored and as error messages name it.
	String() string
	// Size is the number of offsets.
	Size() int
	// Static is the size of the static band at the bottom.
	Static() int
	// Offset is the offset of value; a value outside the range is a
	// *NotInRangeError, one that does not parse an error of its own.
	Offset(value string) (int, error)
	// Value is the value at an offset.
	Value(offset int) string
	// Taken is the error of a requested value already in use.
	Taken() error
}

// IPRange is a Service CIDR. Its offsets leave out the network and
// broadcast addresses, so offset 0 is the first IP (the kubernetes Service's).
type IPRange struct {
	prefix netip.Prefix
	size   int
}

var _ Range = (*IPRange)(nil)

// maxIPRangeSize bounds the bitmap as kube-apiserver does for wide ranges.
const maxIPRangeSize = 1 << 20

// ParseIPRange reads an IPv4 CIDR of at most 2^20 addresses, such as 10.96.0.0/12.
func ParseIPRange(cidr string) (*IPRange, error) {
	p, err := netip.ParsePrefix(cidr)
	if err != nil {
		return nil, fmt.Errorf("invalid service cluster IP range %q: %w", cidr, err)
	}
	if !p.Addr().Is4() {
		return nil, fmt.Errorf("service cluster IP range %q: only IPv4 is supported", cidr)
	}
	hostBits := 32 - p.Bits()
	if hostBits < 2 || hostBits > 20 {
		return nil, fmt.Errorf("service cluster IP range %q: the prefix must be between /12 and /30", cidr)
	}
	p = p.Masked()
	return &IPRange{prefix: p, size: 1<<hostBits - 2}, nil
}

func (r *IPRange) String() string { return r.prefix.String() }
func (r *IPRange) Size() int      { return r.size }

// Static is kube-apiserver's band for Service IPs: size/16 within [16, 256].
func (r *IPRange) Static() int { return StaticBand(r.size, 16, 256, 16) }

// Taken implements Range.
func (r *IPRange) Taken() error { return ErrAllocatedIP }

// Offset implements Range.
func (r *IPRange) Offset(value string) (int, error) {
	ip, err := netip.ParseAddr(value)
	if err != nil {
		return 0, fmt.Errorf("failed to parse service IP %q", value)
	}
	base := r.base()
	if !r.prefix.Contains(ip) || ip.Compare(base) < 0 {
		return 0, &NotInRangeError{Value: value, Range: r.String()}
	}
	off := int(u32(ip) - u32(base))
	if off >= r.size {
		return 0, &NotInRangeError{Value: value, Range: r.String()}
	}
	return off, nil
}

// Value implements Range.
func (r *IPRange) Value(offset int) string {
	v := u32(r.base()) + uint32(offset)
	return netip.AddrFrom4([4]byte{byte(v >> 24), byte(v >> 16), byte(v >> 8), byte(v)}).String()
}

// First is the range's first usable IP, the kubernetes Service's.
func (r *IPRange) First() string { return r.Value(0) }

func (r *IPRange) base() netip.Addr { return r.prefix.Addr().Next() }

func u32(a netip.Addr) uint32 {
	b := a.As4()
	return uint32(b[0])<<24 | uint32(b[1])<<16 | uint32(b[2])<<8 | uint32(b[3])
}

// PortRange is the NodePort range, such as 30000-32767.
type PortRange struct{ base, size int }

var _ Range = (*PortRange)(nil)

// ParsePortRange reads "lo-hi" (or one port "p"), as --service-node-port-range.
func ParsePortRange(s string) (*PortRange, error) {
	lo, hi, found := strings.Cut(strings.TrimSpace(s), "-")
	if !found {
		hi = lo
	}
	a, err1 := strconv.Atoi(strings.TrimSpace(lo))
	b, err2 := strconv.Atoi(strings.TrimSpace(hi))
	if err1 != nil || err2 != nil || a < 1 || b > 65535 || b < a {
		return nil, fmt.Errorf("invalid service node port range %q", s)
	}
	return &PortRange{base: a, size: b - a + 1}, nil
}

func (r *PortRange) String() string { return fmt.Sprintf("%d-%d", r.base, r.base+r.size-1) }
func (r *PortRange) Size() int      { return r.size }

// Static is kube-apiserver's band for NodePorts: size/32 within [16, 128].
func (r *PortRange) Static() int { return StaticBand(r.size, 16, 128, 32) }

// Taken implements Range.
func (r *PortRange) Taken() error { return ErrAllocatedPort }

// Offset implements Range.
func (r *PortRange) Offset(value string) (int, error) {
	p, err := strconv.Atoi(value)
	if err != nil {
		return 0, fmt.Errorf("invalid port %q", value)
	}
	if p < r.base || p >= r.base+r.size {
		return 0, &NotInRangeError{Value: value, Range: r.String(), Port: true}
	}
	return p - r.base, nil
}

// Value implements Range.
func (r *PortRange) Value(offset int) string { return strconv.Itoa(r.base + offset) }
