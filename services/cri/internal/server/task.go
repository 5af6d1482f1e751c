package server

import (
	"context"
	"fmt"
	"syscall"
	"time"

	containerd "github.com/containerd/containerd/v2/client"
	"github.com/containerd/containerd/v2/pkg/cio"
)

// nullIO is the pause process's: it writes nothing worth keeping.
var nullIO = cio.NullIO

// waitTask waits for task's exit, waiting again when the wait broke off
// (containerd restarted) rather than exited. It returns nil when ctx ends.
func (s *Service) waitTask(ctx context.Context, task containerd.Task) *containerd.ExitStatus {
	backoff := 100 * time.Millisecond
	for {
		ch, err := task.Wait(ctx)
		if err == nil {
			st := <-ch
			if st.Error() == nil {
				return &st
			}
			err = st.Error()
		}
		if isNotFound(err) {
			// The task is gone without its exit seen (deleted by a stop).
			st := containerd.NewExitStatus(255, time.Now(), nil)
			return st
		}
		if ctx.Err() != nil {
			return nil
		}
		s.log.Debug("task wait broke off, waiting again", "task", task.ID(), "err", err)
		select {
		case <-time.After(backoff):
		case <-ctx.Done():
			return nil
		}
		if backoff < 5*time.Second {
			backoff *= 2
		}
	}
}

// killTask stops the task of containerd container id: SIGTERM and up to
// timeout for it to exit, then SIGKILL to every process of it.
func (s *Service) killTask(ctx context.Context, id string, timeout time.Duration) error {
	c, err := s.client.LoadContainer(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	task, err := c.Task(ctx, nil)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	exitCh, err := task.Wait(ctx)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return fmt.Errorf("wait for %s: %w", id, err)
	}
	st, err := task.Status(ctx)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	if st.Status == containerd.Stopped {
		return nil
	}
	if timeout > 0 {
		if err := task.Kill(ctx, syscall.SIGTERM); err != nil && !isNotFound(err) {
			return fmt.Errorf("signal %s: %w", id, err)
		}
		timer := time.NewTimer(timeout)
		defer timer.Stop()
		select {
		case <-exitCh:
			return nil
		case <-timer.C:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
	if err := task.Kill(ctx, syscall.SIGKILL, containerd.WithKillAll); err != nil && !isNotFound(err) {
		return fmt.Errorf("kill %s: %w", id, err)
	}
	select {
	case <-exitCh:
		return nil
	case <-time.After(30 * time.Second):
		return fmt.Errorf("%s did not exit after SIGKILL", id)
	case <-ctx.Done():
		return ctx.Err()
	}
}

// deleteContainerd deletes a containerd container with its task and
// snapshot.
func (s *Service) deleteContainerd(ctx context.Context, id string) error {
	c, err := s.client.LoadContainer(ctx, id)
	if err != nil {
		if isNotFound(err) {
			return nil
		}
		return err
	}
	if task, err := c.Task(ctx, nil); err == nil {
		if _, err := task.Delete(ctx, containerd.WithProcessKill); err != nil && !isNotFound(err) {
			return fmt.Errorf("delete task %s: %w", id, err)
		}
	}
	if err := c.Delete(ctx, containerd.WithSnapshotCleanup); err != nil && !isNotFound(err) {
		return fmt.Errorf("delete %s: %w", id, err)
	}
	return nil
}
