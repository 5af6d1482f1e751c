// Command box is the tiny multi-call tool of the test image the kubelet's
// integration tests build when docker has no podline images: called as
// true, false, sleep, cat, echo, ls or touch (by its name, or as "box NAME"),
// it does what those do, enough for init containers, exec probes and
// exec.
package main

import (
	"fmt"
	"io"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"time"
)

func main() {
	name, args := filepath.Base(os.Args[0]), os.Args[1:]
	if name == "box" && len(args) > 0 {
		name, args = args[0], args[1:]
	}
	switch name {
	case "true":
	case "false":
		os.Exit(1)
	case "sleep":
		if len(args) > 0 {
			s, _ := strconv.ParseFloat(args[0], 64)
			time.Sleep(time.Duration(s * float64(time.Second)))
		}
	case "echo":
		fmt.Println(strings.Join(args, " "))
	case "cat":
		for _, a := range args {
			f, err := os.Open(a)
			if err != nil {
				fmt.Fprintf(os.Stderr, "cat: can't open '%s': %v\n", a, err)
				os.Exit(1)
			}
			_, _ = io.Copy(os.Stdout, f)
			f.Close()
		}
	case "ls":
		for _, a := range args {
			entries, err := os.ReadDir(a)
			if err != nil {
				fmt.Fprintf(os.Stderr, "ls: %s: %v\n", a, err)
				os.Exit(1)
			}
			for _, e := range entries {
				fmt.Println(e.Name())
			}
		}
	case "touch":
		for _, a := range args {
			if err := os.WriteFile(a, nil, 0o644); err != nil {
				fmt.Fprintln(os.Stderr, err)
				os.Exit(1)
			}
		}
	default:
		fmt.Fprintf(os.Stderr, "box: unknown command %q\n", name)
		os.Exit(127)
	}
}
