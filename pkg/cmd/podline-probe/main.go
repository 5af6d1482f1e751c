// Command podline-probe is the container healthcheck of third-party
// images podline builds FROM scratch (the registry, NATS): it GETs the URL
// given with --probe and exits 0 on 200, 1 otherwise.
package main

import (
	"flag"
	"fmt"
	"os"

	"podline.dev/pkg/healthprobe"
)

func main() {
	probe := healthprobe.Flag(flag.CommandLine)
	flag.Parse()
	if *probe == "" {
		fmt.Fprintln(os.Stderr, "usage: podline-probe --probe=URL")
		os.Exit(2)
	}
	healthprobe.Run(*probe)
}
