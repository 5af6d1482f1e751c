package binarytest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/miekg/dns"
)

// startTimeout bounds CoreDNS' start-up on a busy 2-core machine.
const startTimeout = 30 * time.Second

// binary is $COREDNS or the repository's bin/coredns; the test skips
// without either.
func binary(t *testing.T) string {
	t.Helper()
	bin := os.Getenv("COREDNS")
	if bin == "" {
		var err error
		if bin, err = filepath.Abs("../../../bin/coredns"); err != nil {
			t.Fatal(err)
		}
	}
	if _, err := os.Stat(bin); err != nil {
		t.Skip("bin/coredns is not built (make coredns), and $COREDNS is not set")
	}
	return bin
}

// freePort is a loopback port that nothing listened on, over TCP or UDP, a
// moment ago (DNS takes both).
func freePort(t *testing.T) int {
	t.Helper()
	for range 20 {
		l, err := net.Listen("tcp", "127.0.0.1:0")
		if err != nil {
			t.Fatal(err)
		}
		port := l.Addr().(*net.TCPAddr).Port
		u, err := net.ListenPacket("udp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
		l.Close()
		if err == nil {
			u.Close()
			return port
		}
	}
	t.Fatal("no loopback port free for both TCP and UDP")
	return 0
}

// eventually calls check every 100ms until it returns nil, and fails the
// test with what and check's last error once timeout has passed.
func eventually(t *testing.T, timeout time.Duration, what string, check func() error) {
	t.Helper()
	deadline := time.Now().Add(timeout)
	for {
		err := check()
		if err == nil {
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("%s: not within %v: %v", what, timeout, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// lockedBuffer collects CoreDNS' output for failure messages.
type lockedBuffer struct {
	mu  sync.Mutex
	buf bytes.Buffer
}

func (b *lockedBuffer) Write(p []byte) (int, error) {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.Write(p)
}

func (b *lockedBuffer) String() string {
	b.mu.Lock()
	defer b.mu.Unlock()
	return b.buf.String()
}

// server is a running bin/coredns on loopback ports.
type server struct {
	dns, health, ready string // host:port
	out                *lockedBuffer
}

// start runs bin/coredns with corefile, in which DNS, HEALTH and READY
// stand for free loopback ports, and waits until /ready answers 200.
func start(t *testing.T, corefile string) *server {
	t.Helper()
	bin := binary(t)
	s := &server{out: &lockedBuffer{}}
	ports := map[string]*string{"DNS": &s.dns, "HEALTH": &s.health, "READY": &s.ready}
	for word, addr := range ports {
		port := strconv.Itoa(freePort(t))
		*addr = net.JoinHostPort("127.0.0.1", port)
		corefile = strings.ReplaceAll(corefile, word, port)
	}
	conf := filepath.Join(t.TempDir(), "Corefile")
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	cmd := exec.Command(bin, "-conf", conf)
	cmd.Stdout, cmd.Stderr = s.out, s.out
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	exited := make(chan error, 1)
	go func() { exited <- cmd.Wait() }()
	t.Cleanup(func() {
		_ = cmd.Process.Kill()
		<-exited
		if t.Failed() {
			t.Logf("coredns output:\n%s", s.out)
		}
	})
	eventually(t, startTimeout, "coredns /ready", func() error {
		select {
		case err := <-exited:
			exited <- err
			t.Fatalf("coredns exited: %v\n%s", err, s.out)
		default:
		}
		return httpOK("http://" + s.ready + "/ready")
	})
	return s
}

func httpOK(url string) error {
	c := http.Client{Timeout: 2 * time.Second}
	resp, err := c.Get(url)
	if err != nil {
		return err
	}
	resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		return fmt.Errorf("%s: %s", url, resp.Status)
	}
	return nil
}

// query asks addr over net ("udp" or "tcp") for name's qtype records.
func query(t *testing.T, network, addr, name string, qtype uint16) *dns.Msg {
	t.Helper()
	m := new(dns.Msg)
	m.SetQuestion(name, qtype)
	c := &dns.Client{Net: network, Timeout: 5 * time.Second}
	r, _, err := c.Exchange(m, addr)
	if err != nil {
		t.Fatalf("%s %s %s: %v", network, name, dns.TypeToString[qtype], err)
	}
	return r
}

// answers are the A and AAAA addresses of r, sorted.
func answers(r *dns.Msg) []string {
	var ips []string
	for _, rr := range r.Answer {
		switch rr := rr.(type) {
		case *dns.A:
			ips = append(ips, rr.A.String())
		case *dns.AAAA:
			ips = append(ips, rr.AAAA.String())
		}
	}
	slices.Sort(ips)
	return ips
}

const hostsCorefile = `podline.test:DNS {
    bind 127.0.0.1
    errors
    log
    health 127.0.0.1:HEALTH
    ready 127.0.0.1:READY
    loadbalance
    cache 30
    hosts {
        10.1.2.3 web.podline.test
        10.1.2.4 web.podline.test
        fd00::5 db.podline.test
    }
}
`

// The binary serves a hosts zone over UDP and TCP with every address of a
// name, SERVFAIL for a name the zone lacks, and REFUSED for a name outside
// every zone it serves (as the cluster's Corefile leaves the outside world
// unserved).
func TestHostsZone(t *testing.T) {
	s := start(t, hostsCorefile)
	tests := []struct {
		name, network, qname string
		qtype                uint16
		rcode                int
		want                 []string
	}{
		{"A over UDP", "udp", "web.podline.test.", dns.TypeA, dns.RcodeSuccess, []string{"10.1.2.3", "10.1.2.4"}},
		{"A over TCP", "tcp", "web.podline.test.", dns.TypeA, dns.RcodeSuccess, []string{"10.1.2.3", "10.1.2.4"}},
		{"AAAA", "udp", "db.podline.test.", dns.TypeAAAA, dns.RcodeSuccess, []string{"fd00::5"}},
		{"name case is ignored", "udp", "WEB.Podline.Test.", dns.TypeA, dns.RcodeSuccess, []string{"10.1.2.3", "10.1.2.4"}},
		// hosts passes a name it lacks on, and no plugin follows it.
		{"name not in hosts", "udp", "missing.podline.test.", dns.TypeA, dns.RcodeServerFailure, nil},
		{"name outside every zone", "udp", "example.com.", dns.TypeA, dns.RcodeRefused, nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			r := query(t, tt.network, s.dns, tt.qname, tt.qtype)
			if r.Rcode != tt.rcode {
				t.Fatalf("rcode %s, want %s", dns.RcodeToString[r.Rcode], dns.RcodeToString[tt.rcode])
			}
			if got := answers(r); !slices.Equal(got, tt.want) {
				t.Fatalf("answers %v, want %v", got, tt.want)
			}
		})
	}
}

// health answers on its own port once the server runs, as the Deployment's
// liveness probe expects.
func TestHealth(t *testing.T) {
	s := start(t, hostsCorefile)
	if err := httpOK("http://" + s.health + "/health"); err != nil {
		t.Fatal(err)
	}
}

// A Corefile naming a plugin left out of the build fails at start-up
// instead of running without it.
func TestUnknownPluginFails(t *testing.T) {
	bin := binary(t)
	conf := filepath.Join(t.TempDir(), "Corefile")
	corefile := strings.ReplaceAll("podline.test:DNS {\n    bind 127.0.0.1\n    etcd\n}\n", "DNS", strconv.Itoa(freePort(t)))
	if err := os.WriteFile(conf, []byte(corefile), 0o644); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(context.Background(), startTimeout)
	defer cancel()
	out, err := exec.CommandContext(ctx, bin, "-conf", conf).CombinedOutput()
	var exit *exec.ExitError
	if !errors.As(err, &exit) || !strings.Contains(string(out), `Unknown directive 'etcd'`) {
		t.Fatalf("coredns with the etcd plugin: %v\n%s", err, out)
	}
}
