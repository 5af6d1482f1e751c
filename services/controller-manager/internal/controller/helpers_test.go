package controller_test

import (
	"podline.dev/pkg/client"
	corev1 "podline.dev/proto/core/v1"
	ctltest "podline.dev/services/controller-manager/internal/controller/testing"
)

func clientFor(f *ctltest.Fixture) *client.Client[*corev1.Pod] { return client.Pods(f.Conn) }
