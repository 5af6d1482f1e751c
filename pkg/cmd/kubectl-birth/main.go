package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"time"

	"podline.dev/pkg/pki"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// options are the command line's flags.
type options struct {
	namespace, kubeconfig, context, jaeger, jaegerCA string
	allPods, allSpans                                bool
	width                                            int
}

// run is the command: it returns the exit code (0, or 1 with the error on
// stderr as kubectl prints it).
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	o, positional, err := parseFlags(args, stderr)
	if errors.Is(err, flag.ErrHelp) {
		return 0
	}
	if err == nil {
		err = runWith(ctx, o, positional, stdout)
	}
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	return 0
}

func parseFlags(args []string, stderr io.Writer) (options, []string, error) {
	var o options
	fs := flag.NewFlagSet("kubectl-birth", flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.StringVar(&o.namespace, "n", "", "namespace (default: the context's, else default)")
	fs.StringVar(&o.namespace, "namespace", "", "namespace (same as -n)")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig file (default: $KUBECONFIG, else ~/.kube/config)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context (default: the current context)")
	fs.StringVar(&o.jaeger, "jaeger", "https://127.0.0.1:16686", "Jaeger query URL")
	fs.StringVar(&o.jaegerCA, "jaeger-ca-file", filepath.Join(".podline", "pki", "ca.crt"), "CA bundle that verifies an https:// --jaeger (the default is the cluster CA, relative to the podline repository)")
	fs.BoolVar(&o.allPods, "all-pods", false, "for deploy/NAME, every Pod's birth (default: the first Pod's)")
	fs.BoolVar(&o.allSpans, "all-spans", false, "every span of the Pod, gRPC plumbing and Event writes included")
	fs.IntVar(&o.width, "width", 0, "columns to draw in (default: the terminal's, else $COLUMNS, else 120)")
	fs.Usage = func() {
		fmt.Fprintln(stderr, errUsage)
		fs.PrintDefaults()
	}
	// kubectl passes a plugin its arguments as typed: flags may follow the
	// positional arguments, so parse around them.
	var positional []string
	for {
		if err := fs.Parse(args); err != nil {
			return o, nil, err
		}
		args = fs.Args()
		if len(args) == 0 {
			break
		}
		positional = append(positional, args[0])
		args = args[1:]
	}
	return o, positional, nil
}

func runWith(ctx context.Context, o options, positional []string, stdout io.Writer) error {
	t, err := parseTarget(positional)
	if err != nil {
		return err
	}
	rc, err := loadKubeconfig(kubeconfigPath(o.kubeconfig), o.context)
	if err != nil {
		return err
	}
	ns := o.namespace
	if ns == "" {
		ns = rc.Namespace
	}
	if ns == "" {
		ns = "default"
	}
	api, err := newAPIClient(rc)
	if err != nil {
		return err
	}
	pods, err := api.pods(ctx, ns, t)
	if err != nil {
		return err
	}
	if !o.allPods {
		pods = pods[:1]
	}
	b := &birth{api: api, jaeger: o.jaeger, width: o.width, allSpans: o.allSpans, out: stdout}
	b.jaegerHC, b.jaegerErr = jaegerClient(o.jaeger, o.jaegerCA)
	if b.width <= 0 {
		b.width = terminalWidth(stdout)
	}
	for i, p := range pods {
		if i > 0 {
			fmt.Fprintln(stdout)
		}
		if err := b.show(ctx, p); err != nil {
			return err
		}
	}
	return nil
}

// jaegerClient is the HTTP client for the Jaeger query API at base: for
// https, one that trusts the CA bundle in caFile (podline's Jaeger serves
// with a certificate of the cluster CA). Without that bundle Jaeger cannot
// be asked, and the error says so as an unreachable Jaeger: the Events
// still tell the birth.
func jaegerClient(base, caFile string) (*http.Client, error) {
	hc := &http.Client{Timeout: 15 * time.Second}
	if !strings.HasPrefix(base, "https://") {
		return hc, nil
	}
	cfg, err := pki.ClientTLS(caFile, "", "")
	if err != nil {
		return nil, fmt.Errorf("%w: no CA to verify %s (--jaeger-ca-file): %v", errJaegerUnreachable, base, err)
	}
	hc.Transport = &http.Transport{TLSClientConfig: cfg}
	return hc, nil
}

// terminalWidth is out's width when it is a terminal, else $COLUMNS, else 120.
func terminalWidth(out io.Writer) int {
	if f, ok := out.(*os.File); ok {
		if w := ttyWidth(f); w > 0 {
			return w
		}
	}
	if w, err := strconv.Atoi(os.Getenv("COLUMNS")); err == nil && w > 0 {
		return w
	}
	return 120
}
