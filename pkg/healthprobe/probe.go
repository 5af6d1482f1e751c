// Package healthprobe is the container healthcheck of podline's images,
// which are FROM scratch (no shell, no curl): each binary takes
// --probe URL, GETs it and exits 0 on 200, 1 otherwise.
package healthprobe

import (
	"crypto/tls"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"time"
)

// Check GETs url within 3 seconds and reports whether it answered 200.
// An https URL is not verified: a probe asks the process beside it on
// loopback whether it is healthy and reads no data worth protecting.
func Check(url string, out io.Writer) bool {
	c := &http.Client{Timeout: 3 * time.Second, Transport: &http.Transport{
		TLSClientConfig: &tls.Config{InsecureSkipVerify: true}, //nolint:gosec // loopback health probe
	}}
	resp, err := c.Get(url)
	if err != nil {
		fmt.Fprintln(out, err)
		return false
	}
	_ = resp.Body.Close()
	if resp.StatusCode != http.StatusOK {
		fmt.Fprintln(out, url+": "+resp.Status)
		return false
	}
	return true
}

// Flag registers --probe on fs; call Run after parsing.
func Flag(fs *flag.FlagSet) *string {
	return fs.String("probe", "", "only GET this URL and exit 0 on 200, else 1 (the container healthcheck of an image with no shell)")
}

// Run exits the process with the probe's verdict when url is set, and
// returns otherwise.
func Run(url string) {
	if url == "" {
		return
	}
	if Check(url, os.Stderr) {
		os.Exit(0)
	}
	os.Exit(1)
}
