// Command etcd-launcher is the entrypoint of podline's etcd image. etcd
// 3.6 exports its spans over OTLP/gRPC in plain text only (its exporter is
// built insecure), while Jaeger takes spans over TLS only. So the launcher
// listens on the member's loopback, where etcd's exporter sends
// (ETCD_DISTRIBUTED_TRACING_ADDRESS), and carries each connection over TLS
// to Jaeger, verified with the cluster CA; then it runs etcd as its child
// with the same environment, passes SIGTERM and SIGINT on to it, and exits
// with etcd's status.
//
//	etcd-launcher --otlp-listen=127.0.0.1:4317 --otlp-upstream=jaeger:4317 \
//	    --otlp-ca-file=/etc/kubernetes/pki/etcd/otlp-ca.crt -- /usr/local/bin/etcd
package main

import (
	"errors"
	"flag"
	"fmt"
	"io"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"os/signal"
	"syscall"
)

func main() {
	os.Exit(run(os.Args[1:], os.Stderr))
}

// run is the command; it returns the exit status: etcd's, or 2 when the
// launcher could not start it.
func run(args []string, stderr io.Writer) int {
	log := slog.New(slog.NewJSONHandler(stderr, nil)).With("component", "etcd-launcher")
	fs := flag.NewFlagSet("etcd-launcher", flag.ContinueOnError)
	fs.SetOutput(stderr)
	listen := fs.String("otlp-listen", "", "loopback host:port where etcd's exporter sends its spans in plain text")
	upstream := fs.String("otlp-upstream", "", "host:port of the OTLP/gRPC receiver (Jaeger), reached over TLS")
	caFile := fs.String("otlp-ca-file", "", "CA bundle that verifies the receiver's certificate, for the host of --otlp-upstream")
	if err := fs.Parse(args); err != nil {
		return 2
	}
	child := fs.Args()
	if *listen == "" || *upstream == "" || *caFile == "" || len(child) == 0 {
		fmt.Fprintln(stderr, "usage: etcd-launcher --otlp-listen=127.0.0.1:PORT --otlp-upstream=HOST:PORT --otlp-ca-file=CA -- ETCD [ARGS...]")
		return 2
	}
	r, err := newRelay(*upstream, *caFile, log)
	if err != nil {
		log.Error("relay", "err", err)
		return 2
	}
	l, err := listenLoopback(*listen)
	if err != nil {
		log.Error("relay", "err", err)
		return 2
	}
	defer l.Close()
	go func() {
		if err := r.serve(l); err != nil && !errors.Is(err, net.ErrClosed) {
			log.Error("relay stopped", "err", err)
		}
	}()
	log.Info("relaying spans over TLS", "listen", l.Addr().String(), "upstream", *upstream)
	return runChild(child, log)
}

// listenLoopback listens on addr, which must be a loopback address: what
// arrives there travels in plain text.
func listenLoopback(addr string) (net.Listener, error) {
	host, _, err := net.SplitHostPort(addr)
	if err != nil {
		return nil, err
	}
	if ip := net.ParseIP(host); ip == nil || !ip.IsLoopback() {
		return nil, fmt.Errorf("--otlp-listen %s: not a loopback IP address", addr)
	}
	return net.Listen("tcp", addr)
}

// runChild runs argv with the launcher's environment and standard streams,
// passes SIGTERM and SIGINT on to it, and returns its exit status (128 plus
// the signal's number when a signal ended it, as a shell reports it).
func runChild(argv []string, log *slog.Logger) int {
	cmd := exec.Command(argv[0], argv[1:]...)
	cmd.Stdin, cmd.Stdout, cmd.Stderr = os.Stdin, os.Stdout, os.Stderr
	// Registered before the start, so that a signal arriving in between is
	// passed on rather than ending the launcher.
	sigs := make(chan os.Signal, 2)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT)
	defer signal.Stop(sigs)
	if err := cmd.Start(); err != nil {
		log.Error("start", "argv", argv, "err", err)
		return 2
	}
	done := make(chan struct{})
	defer close(done)
	go func() {
		for {
			select {
			case s := <-sigs:
				_ = cmd.Process.Signal(s)
			case <-done:
				return
			}
		}
	}()
	err := cmd.Wait()
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		log.Error("wait", "err", err)
		return 2
	}
	ws := cmd.ProcessState.Sys().(syscall.WaitStatus)
	if ws.Signaled() {
		return 128 + int(ws.Signal())
	}
	return ws.ExitStatus()
}
