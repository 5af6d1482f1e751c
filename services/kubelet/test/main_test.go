package test

import (
	"os"
	"testing"
)

func TestMain(m *testing.M) {
	code := m.Run()
	stopSharedContainerd()
	os.Exit(code)
}
