package checkpoint

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/safetensors"
)

// FuzzLoad decodes arbitrary bytes as a checkpoint, as they are and with
// the checksum recomputed over them, so that the fuzzer gets past the checksum
// into the record's JSON, its version and the split into model and
// optimizer tensors. Decoding must never panic, and what it accepts must be
// consistent: every tensor is the model's or the optimizer's, with as many
// elements as its shape says. (TestRoundTripIsBitIdentical covers Save and
// Load's round trip, whose fsyncs would slow the fuzzer too much.)
func FuzzLoad(f *testing.F) {
	dir := f.TempDir()
	r := newRun(f, 1)
	full, modelOnly := filepath.Join(dir, "full.safetensors"), filepath.Join(dir, "model.safetensors")
	save(f, full, r, 7)
	if err := Save(modelOnly, Meta{Step: 3}, r.params, nil); err != nil {
		f.Fatal(err)
	}
	for _, p := range []string{full, modelOnly} {
		b, err := os.ReadFile(p)
		if err != nil {
			f.Fatal(err)
		}
		f.Add(b)
		f.Add(b[:len(b)/2])
	}
	f.Add([]byte{})
	f.Fuzz(func(t *testing.T, data []byte) {
		// In memory, as load does after reading the file: a file per input
		// would slow the fuzzer down many times.
		sf, err := safetensors.Read(bytes.NewReader(data), int64(len(data)))
		if err != nil {
			return
		}
		if _, err := decode("ckpt", sf); err != nil && err.Error() == "" {
			t.Fatal("empty error message")
		}
		if sf.Metadata == nil {
			sf.Metadata = map[string]string{}
		}
		sf.Metadata[checksumKey] = digest(sf.Tensors, sf.Metadata)
		l, err := decode("ckpt", sf)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		n := len(l.Model)
		if l.Optimizer != nil {
			n += len(l.Optimizer.Tensors)
		}
		if n != len(sf.Tensors) {
			t.Fatalf("%d tensors in the file, %d decoded", len(sf.Tensors), n)
		}
		for name, x := range l.Model {
			if strings.HasPrefix(name, optimPrefix) {
				t.Fatalf("optimizer tensor %q decoded as the model's", name)
			}
			if x.Len() != len(x.Data) {
				t.Fatalf("%s: shape %v, %d elements", name, x.Shape, len(x.Data))
			}
		}
	})
}
