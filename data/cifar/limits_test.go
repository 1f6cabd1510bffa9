package cifar

import (
	"os"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
)

// TestAbsurdSizeRejectedBeforeAllocating gives ReadFile sparse files that
// claim more records than the limit, in both formats: each must be refused
// from its size, having allocated almost nothing (a read of the file would
// take gigabytes).
func TestAbsurdSizeRejectedBeforeAllocating(t *testing.T) {
	for _, format := range []Format{CIFAR100, CIFAR10} {
		path := filepath.Join(t.TempDir(), "train.bin")
		f, err := os.Create(path)
		if err != nil {
			t.Fatal(err)
		}
		err = f.Truncate(int64(MaxRecords+1) * int64(format.recordSize()))
		f.Close()
		if err != nil {
			t.Skip("cannot make a sparse file:", err)
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err = ReadFile(path, format, 10)
		runtime.ReadMemStats(&after)
		if err == nil || !strings.Contains(err.Error(), "more than the limit") {
			t.Fatalf("%v: error %v, want one about the record limit", format, err)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%v: %d bytes allocated before refusing", format, got)
		}
	}
}
