package cifar

import (
	"os"
	"path/filepath"
	"testing"
)

// FuzzLoad writes arbitrary bytes as a CIFAR-100 directory (the same bytes
// as train.bin and test.bin, with a label-names file) or as one CIFAR-10
// batch, and checks that Load never panics, and that what it accepts is
// consistent with the file: a whole number of records, labels in range.
func FuzzLoad(f *testing.F) {
	rec100 := func(coarse, fine byte) []byte { return append([]byte{coarse, fine}, make([]byte, ImageBytes)...) }
	rec10 := func(label byte) []byte { return append([]byte{label}, make([]byte, ImageBytes)...) }
	f.Add(rec100(0, 0), "a\nb\n", false)
	f.Add(append(rec100(3, 17), rec100(19, 99)...), "", false)
	f.Add(rec100(20, 0), "", false)
	f.Add(rec100(0, 2), "a\nb\n", false)
	f.Add(rec100(0, 0)[:100], "", false)
	f.Add([]byte{}, "", false)
	f.Add(rec100(0, 0), "\n\n", false)
	f.Add(append(rec10(9), rec10(3)...), "", true)
	f.Add(rec10(10), "", true)
	f.Add(rec10(0)[:3072], "", true)
	f.Fuzz(func(t *testing.T, data []byte, names string, cifar10 bool) {
		dir := t.TempDir()
		files := []string{"train.bin", "test.bin"}
		format := CIFAR100
		if cifar10 {
			files, format = append(cifar10Train, "test_batch.bin"), CIFAR10
		} else if names != "" {
			os.WriteFile(filepath.Join(dir, "fine_label_names.txt"), []byte(names), 0o644)
		}
		for _, n := range files {
			if err := os.WriteFile(filepath.Join(dir, n), data, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		train, test, err := Load(dir)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		mem, err := Decode("x", data, format, test.Classes)
		if err != nil {
			t.Fatalf("Load accepted what Decode refused: %v", err)
		}
		if !sameDataset(mem, test) {
			t.Fatal("Load and Decode read the same bytes differently")
		}
		rs := format.recordSize()
		if len(data)%rs != 0 || test.Len() != len(data)/rs || train.Len() != test.Len()*(len(files)-1) {
			t.Fatalf("%d bytes read as %d test and %d training records", len(data), test.Len(), train.Len())
		}
		for _, d := range []*Dataset{train, test} {
			if len(d.Images) != d.Len()*ImageBytes {
				t.Fatal("ragged image buffer")
			}
			for i, l := range d.Labels {
				if int(l) >= d.Classes || (d.Coarse != nil && d.Coarse[i] >= coarseClasses) {
					t.Fatalf("record %d: label %d of %d classes accepted", i, l, d.Classes)
				}
			}
		}
	})
}
