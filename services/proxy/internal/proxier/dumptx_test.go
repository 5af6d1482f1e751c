package proxier

import (
	"context"
	"os"
	"testing"
)

func TestDumpBenchTx(t *testing.T) {
	if os.Getenv("DUMP_TX") == "" {
		t.Skip()
	}
	nft := newRecorder()
	src := benchSource(1000, 10)
	p := newTestProxier(nft, src, testNode)
	if err := p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile("/tmp/full.nft", []byte(nft.last()), 0o644)
	changeOne(src, p, 10, 0)
	if err := p.Sync(context.Background()); err != nil {
		t.Fatal(err)
	}
	os.WriteFile("/tmp/small.nft", []byte(nft.last()), 0o644)
}
