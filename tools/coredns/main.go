// Command coredns is the upstream CoreDNS server, built from
// github.com/coredns/coredns at the version pinned in this module's go.mod,
// with only the plugins a podline cluster's DNS needs.
//
// CoreDNS normally generates its plugin list from plugin.cfg with go
// generate. This main does the same by hand: it sets dnsserver.Directives to
// the chosen plugins, in plugin.cfg's order (the order in which a query
// passes through them, whatever order a Corefile names them in), and
// blank-imports each plugin's package so that its init registers it. A
// Corefile that names a plugin left out here fails at start-up with
// "Unknown directive".
package main

import (
	"fmt"
	"os"

	"github.com/coredns/coredns/core/dnsserver"
	"github.com/coredns/coredns/coremain"

	_ "github.com/coredns/coredns/plugin/bind"
	_ "github.com/coredns/coredns/plugin/cache"
	_ "github.com/coredns/coredns/plugin/errors"
	_ "github.com/coredns/coredns/plugin/forward"
	_ "github.com/coredns/coredns/plugin/health"
	_ "github.com/coredns/coredns/plugin/hosts"
	_ "github.com/coredns/coredns/plugin/kubernetes"
	_ "github.com/coredns/coredns/plugin/loadbalance"
	_ "github.com/coredns/coredns/plugin/log"
	_ "github.com/coredns/coredns/plugin/loop"
	_ "github.com/coredns/coredns/plugin/metrics"
	_ "github.com/coredns/coredns/plugin/ready"
	_ "github.com/coredns/coredns/plugin/reload"
	_ "github.com/coredns/coredns/plugin/rewrite"
	_ "github.com/coredns/coredns/plugin/whoami"
)

// directives are the compiled-in plugins in plugin.cfg's order. The
// prometheus directive is the metrics package.
var directives = []string{
	"reload",
	"bind",
	"ready",
	"health",
	"prometheus",
	"errors",
	"log",
	"loadbalance",
	"rewrite",
	"cache",
	"hosts",
	"kubernetes",
	"loop",
	"forward",
	"whoami",
}

func main() {
	if err := dnsserver.SetDirectives(directives); err != nil {
		fmt.Fprintln(os.Stderr, "coredns:", err)
		os.Exit(1)
	}
	coremain.Run()
}
