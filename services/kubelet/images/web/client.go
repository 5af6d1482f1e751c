package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"net"
	"net/http"
	"strings"
	"time"
)

// client runs the subcommands get and lookup and returns the exit status.
func client(args []string, stdout, stderr io.Writer) int {
	switch args[0] {
	case "get":
		return get(args[1:], stdout, stderr)
	case "lookup":
		return lookup(args[1:], stdout, stderr)
	}
	fmt.Fprintf(stderr, "web: unknown command %q (get, lookup)\n", args[0])
	return 2
}

// get sends n GET requests, each on a new connection so a Service's
// balancing picks again, and prints the first line of each body. The first
// failure ends it with status 1.
func get(args []string, stdout, stderr io.Writer) int {
	fs := flag.NewFlagSet("get", flag.ContinueOnError)
	fs.SetOutput(stderr)
	n := fs.Int("n", 1, "requests to send")
	timeout := fs.Duration("timeout", 5*time.Second, "time allowed for each request")
	if err := fs.Parse(args); err != nil || fs.NArg() != 1 {
		fmt.Fprintln(stderr, "usage: web get [-n N] [-timeout D] URL")
		return 2
	}
	c := &http.Client{Timeout: *timeout, Transport: &http.Transport{DisableKeepAlives: true}}
	for i := 0; i < *n; i++ {
		resp, err := c.Get(fs.Arg(0))
		if err != nil {
			fmt.Fprintln(stderr, err)
			return 1
		}
		line, _ := bufio.NewReader(resp.Body).ReadString('\n')
		resp.Body.Close()
		if resp.StatusCode != http.StatusOK {
			fmt.Fprintf(stderr, "GET %s: %s\n", fs.Arg(0), resp.Status)
			return 1
		}
		fmt.Fprintln(stdout, strings.TrimRight(line, "\n"))
	}
	return 0
}

// lookup prints the addresses a name resolves to, one per line, with the
// resolver of /etc/resolv.conf (search list and ndots included).
func lookup(args []string, stdout, stderr io.Writer) int {
	if len(args) != 1 {
		fmt.Fprintln(stderr, "usage: web lookup NAME")
		return 2
	}
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	addrs, err := net.DefaultResolver.LookupHost(ctx, args[0])
	if err != nil {
		fmt.Fprintln(stderr, err)
		return 1
	}
	for _, a := range addrs {
		fmt.Fprintln(stdout, a)
	}
	return 0
}
