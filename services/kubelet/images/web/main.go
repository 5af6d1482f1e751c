// Command web is podline's demo application
// (registry.podline:5000/demo/web:1.0): a small HTTP server that says which
// pod answered, so a Deployment's replicas and their pod IPs can be told
// apart from a node or another pod.
//
// It listens on :8080 (or :$PORT) and serves
//
//	GET /         "hello from <pod name> at <pod ip>"
//	GET /healthz  "ok", for liveness and readiness probes; 503 while the
//	              file /tmp/unready exists (touch it with kubectl exec to
//	              take a pod out of its Services' rotation)
//
// The same binary is the client the tests run inside pods and nodes:
//
//	web get [-n N] [-timeout D] URL   N requests, one body line each
//	web lookup NAME                   the addresses NAME resolves to
//
// The pod name is $POD_NAME (set it with the downward API) or else the
// hostname, which a pod's sandbox sets to the pod name. The IP is $POD_IP or
// else the first non-loopback address of the pod's interfaces. Each request
// is logged to stdout, so `kubectl logs` shows traffic. SIGTERM and SIGINT
// drain open requests for up to five seconds and exit 0.
package main

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/http"
	"os"
	"os/signal"
	"syscall"
	"time"
)

func main() {
	if len(os.Args) > 1 {
		os.Exit(client(os.Args[1:], os.Stdout, os.Stderr))
	}
	log := slog.New(slog.NewTextHandler(os.Stdout, nil))

	addr := ":8080"
	if port := os.Getenv("PORT"); port != "" {
		addr = ":" + port
	}
	name := podName()
	ip := podIP()

	srv := &http.Server{
		Addr:              addr,
		Handler:           newHandler(name, ip, log),
		ReadHeaderTimeout: 5 * time.Second,
	}

	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	go func() {
		<-ctx.Done()
		shutdown, cancel := context.WithTimeout(context.Background(), 5*time.Second)
		defer cancel()
		_ = srv.Shutdown(shutdown)
	}()

	log.Info("serving", "addr", addr, "pod", name, "ip", ip)
	if err := srv.ListenAndServe(); err != nil && !errors.Is(err, http.ErrServerClosed) {
		log.Error("serve", "err", err)
		os.Exit(1)
	}
	log.Info("stopped")
}

// newHandler routes / and /healthz; every other path is 404.
func newHandler(name, ip string, log *slog.Logger) http.Handler {
	mux := http.NewServeMux()
	mux.HandleFunc("GET /{$}", func(w http.ResponseWriter, r *http.Request) {
		log.Info("request", "method", r.Method, "path", r.URL.Path, "remote", r.RemoteAddr)
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		fmt.Fprintf(w, "hello from %s at %s\n", name, ip)
	})
	mux.HandleFunc("GET /healthz", func(w http.ResponseWriter, r *http.Request) {
		w.Header().Set("Content-Type", "text/plain; charset=utf-8")
		if _, err := os.Stat(unreadyFile); err == nil {
			w.WriteHeader(http.StatusServiceUnavailable)
			fmt.Fprintln(w, "unready")
			return
		}
		fmt.Fprintln(w, "ok")
	})
	return mux
}

// unreadyFile, while it exists, fails /healthz.
var unreadyFile = "/tmp/unready"

// podName is $POD_NAME, else the hostname.
func podName() string {
	if name := os.Getenv("POD_NAME"); name != "" {
		return name
	}
	if host, err := os.Hostname(); err == nil && host != "" {
		return host
	}
	return "unknown"
}

// podIP is $POD_IP, else the first global unicast address of this network
// namespace (IPv4 preferred).
func podIP() string {
	if ip := os.Getenv("POD_IP"); ip != "" {
		return ip
	}
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return "unknown"
	}
	var v6 string
	for _, a := range addrs {
		n, ok := a.(*net.IPNet)
		if !ok || !n.IP.IsGlobalUnicast() {
			continue
		}
		if n.IP.To4() != nil {
			return n.IP.String()
		}
		if v6 == "" {
			v6 = n.IP.String()
		}
	}
	if v6 != "" {
		return v6
	}
	return "unknown"
}
