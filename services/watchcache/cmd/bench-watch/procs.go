package main

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

// proc is one process the bench started; each stops with the bench.
type proc struct {
	name string
	cmd  *exec.Cmd
}

func start(ctx context.Context, name, bin string, args ...string) (*proc, error) {
	cmd := exec.CommandContext(ctx, bin, args...)
	log, err := os.Create(filepath.Join(os.TempDir(), "bench-watch-"+name+".log"))
	if err != nil {
		return nil, err
	}
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start %s (%s): %w", name, bin, err)
	}
	return &proc{name: name, cmd: cmd}, nil
}

func (p *proc) stop() {
	_ = p.cmd.Process.Kill()
	_ = p.cmd.Wait()
}

// cpu is the process's user+system CPU time so far, from /proc.
func (p *proc) cpu() time.Duration {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	// Fields after the command name (which may hold spaces) start at ") ".
	f := strings.Fields(string(b[strings.LastIndexByte(string(b), ')')+2:]))
	utime, _ := strconv.ParseInt(f[11], 10, 64)
	stime, _ := strconv.ParseInt(f[12], 10, 64)
	return time.Duration(utime+stime) * time.Second / 100 // USER_HZ
}

// rss is the process's resident memory in bytes.
func (p *proc) rss() int64 {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/status", p.cmd.Process.Pid))
	if err != nil {
		return 0
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, "VmRSS:") {
			kb, _ := strconv.ParseInt(strings.Fields(line)[1], 10, 64)
			return kb << 10
		}
	}
	return 0
}

func freePort() int {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		panic(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

// waitHTTP polls url until it answers 200.
func waitHTTP(ctx context.Context, url string, within time.Duration) error {
	deadline := time.Now().Add(within)
	for {
		resp, err := http.Get(url)
		if err == nil {
			_ = resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return nil
			}
			err = fmt.Errorf("%s: %s", url, resp.Status)
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			return fmt.Errorf("waiting for %s: %w", url, err)
		}
		time.Sleep(100 * time.Millisecond)
	}
}

// metric reads one unlabelled gauge from a Prometheus text endpoint.
func metric(url, name string) float64 {
	resp, err := http.Get(url)
	if err != nil {
		return -1
	}
	defer resp.Body.Close()
	b, err := io.ReadAll(resp.Body)
	if err != nil {
		return -1
	}
	for _, line := range strings.Split(string(b), "\n") {
		if strings.HasPrefix(line, name+" ") {
			v, _ := strconv.ParseFloat(strings.TrimSpace(strings.TrimPrefix(line, name)), 64)
			return v
		}
	}
	return -1
}
