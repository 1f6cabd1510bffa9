package text

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAbsurdSizeRejectedBeforeAllocating gives the token and text loaders
// a sparse file just over the size limit: each must refuse it from its
// size, having allocated almost nothing (a read would take tens of GB).
func TestAbsurdSizeRejectedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "train.bin")
	f, err := os.Create(path)
	if err != nil {
		t.Fatal(err)
	}
	err = f.Truncate(maxFileBytes + 2)
	f.Close()
	if err != nil {
		t.Skip("cannot make a sparse file:", err)
	}
	for _, tc := range []struct {
		name string
		load func() error
	}{
		{"LoadTokens", func() error { _, err := LoadTokens(path, 50304); return err }},
		{"LoadBin", func() error { _, err := LoadBin(dir, 50304); return err }},
		{"LoadText", func() error { _, err := LoadText(path, Byte); return err }},
	} {
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		err := tc.load()
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "over the limit") {
			t.Fatalf("%s: error %v, want one about the size limit", tc.name, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: %d bytes allocated before refusing", tc.name, got)
		}
	}
}
