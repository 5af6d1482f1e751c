// Command pause is the sandbox container of every podline pod
// (podline/pause:3.10), the counterpart of Kubernetes' pause image.
//
// It holds the pod's namespaces open while the pod's other containers come
// and go: it does nothing but wait for SIGTERM or SIGINT and exit 0. When it
// runs as PID 1 of a shared PID namespace it also reaps zombies: orphaned
// processes of the other containers are reparented to it, and it waits for
// them on every SIGCHLD so they never linger as <defunct>.
package main

import (
	"fmt"
	"os"
	"os/signal"
	"syscall"
)

// version is printed by -v, like Kubernetes' pause.
const version = "podline-pause 3.10"

func main() {
	if len(os.Args) > 1 && os.Args[1] == "-v" {
		fmt.Println(version)
		return
	}

	sigs := make(chan os.Signal, 8)
	signal.Notify(sigs, syscall.SIGTERM, syscall.SIGINT, syscall.SIGCHLD)
	reaping := os.Getpid() == 1
	if !reaping {
		fmt.Fprintln(os.Stderr, "pause: warning: not running as PID 1, zombies are not reaped")
	}

	for sig := range sigs {
		switch sig {
		case syscall.SIGCHLD:
			if reaping {
				reap()
			}
		default:
			fmt.Fprintf(os.Stderr, "pause: shutting down, got %s\n", sig)
			os.Exit(0)
		}
	}
}

// reap collects every exited child without blocking. Several children may
// exit behind one SIGCHLD, so it loops until none is left.
func reap() {
	for {
		var status syscall.WaitStatus
		pid, err := syscall.Wait4(-1, &status, syscall.WNOHANG, nil)
		if err == syscall.EINTR {
			continue
		}
		if pid <= 0 || err != nil {
			return
		}
	}
}
