package cifar

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func writeFile(t testing.TB, path string, data []byte) {
	t.Helper()
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestCIFAR100RoundTrip(t *testing.T) {
	s := smallSynth(t, SynthConfig{Train: 30, Test: 11, Classes: 7, Seed: 1, Noise: 10, Outliers: 0.1})
	for _, sub := range []string{"", "cifar-100-binary"} {
		root := t.TempDir()
		if err := WriteDir(filepath.Join(root, sub), s.Train, s.Test); err != nil {
			t.Fatal(err)
		}
		train, test, err := Load(root)
		if err != nil {
			t.Fatal(err)
		}
		if !sameDataset(train, s.Train) || !sameDataset(test, s.Test) || train.Classes != 7 {
			t.Errorf("Load(WriteDir(x)) in %q differs from x", sub)
		}
		data, err := os.ReadFile(filepath.Join(root, sub, "train.bin"))
		if err != nil {
			t.Fatal(err)
		}
		if len(data) != 30*3074 || data[0] != s.Train.Coarse[0] || data[1] != s.Train.Labels[0] || data[2] != s.Train.Images[0] {
			t.Errorf("train.bin is not in the CIFAR-100 record layout")
		}
	}
}

// TestCIFAR100WithoutNames reads a set without fine_label_names.txt, as
// some copies of the real data come, as 100 classes.
func TestCIFAR100WithoutNames(t *testing.T) {
	s := smallSynth(t, SynthConfig{Train: 5, Test: 5, Classes: 3, Seed: 1})
	dir := t.TempDir()
	writeFile(t, filepath.Join(dir, "train.bin"), s.Train.Encode())
	writeFile(t, filepath.Join(dir, "test.bin"), s.Test.Encode())
	train, _, err := Load(dir)
	if err != nil || train.Classes != 100 {
		t.Fatalf("Load: %v classes, error %v; want 100 and none", train.Classes, err)
	}
}

// cifar10File builds a CIFAR-10 batch whose record i has label labels[i]
// and pixels all equal to first+i.
func cifar10File(first byte, labels ...byte) []byte {
	var b []byte
	for i, l := range labels {
		b = append(b, l)
		b = append(b, bytes.Repeat([]byte{first + byte(i)}, ImageBytes)...)
	}
	return b
}

func TestCIFAR10(t *testing.T) {
	dir := filepath.Join(t.TempDir(), "cifar-10-batches-bin")
	for i, name := range cifar10Train {
		writeFile(t, filepath.Join(dir, name), cifar10File(byte(10*i), byte(i), 9))
	}
	writeFile(t, filepath.Join(dir, "test_batch.bin"), cifar10File(200, 3))
	train, test, err := Load(filepath.Dir(dir))
	if err != nil {
		t.Fatal(err)
	}
	if train.Len() != 10 || test.Len() != 1 || train.Classes != 10 || train.Coarse != nil {
		t.Fatalf("got %d training and %d test images, %d classes", train.Len(), test.Len(), train.Classes)
	}
	for i := range 10 {
		wantLabel, wantPix := byte(i/2), byte(10*(i/2)+i%2)
		if i%2 == 1 {
			wantLabel = 9
		}
		if train.Labels[i] != wantLabel || train.Image(i)[0] != wantPix || train.Image(i)[ImageBytes-1] != wantPix {
			t.Errorf("training image %d: label %d pixel %d, want %d and %d", i, train.Labels[i], train.Image(i)[0], wantLabel, wantPix)
		}
	}
	if test.Labels[0] != 3 || test.Image(0)[5] != 200 {
		t.Errorf("test image: label %d pixel %d", test.Labels[0], test.Image(0)[5])
	}
}

// TestBadFiles checks that every kind of broken data directory gives an
// error that names the file and, where there is one, the offset.
func TestBadFiles(t *testing.T) {
	good := smallSynth(t, SynthConfig{Train: 4, Test: 2, Classes: 7, Seed: 1})
	record := func(coarse, fine byte) []byte {
		return append([]byte{coarse, fine}, make([]byte, ImageBytes)...)
	}
	bad := func(i int, rec []byte) []byte {
		b := good.Train.Encode()
		copy(b[i*3074:], rec)
		return b
	}
	for _, tc := range []struct {
		name  string
		setup func(dir string)
		want  []string // substrings of the error
	}{
		{"truncated", func(dir string) {
			writeFile(t, filepath.Join(dir, "train.bin"), good.Train.Encode()[:3*3074+100])
		}, []string{"train.bin", "record 3 at offset 9222 is truncated (100 of 3074 bytes)"}},
		{"one byte too long", func(dir string) {
			writeFile(t, filepath.Join(dir, "test.bin"), append(good.Test.Encode(), 0))
		}, []string{"test.bin", "record 2 at offset 6148"}},
		{"empty", func(dir string) { writeFile(t, filepath.Join(dir, "test.bin"), nil) }, []string{"test.bin is empty"}},
		{"fine label out of range", func(dir string) {
			writeFile(t, filepath.Join(dir, "train.bin"), bad(2, record(1, 7)))
		}, []string{"train.bin", "record 2 at offset 6149", "fine label 7 out of range [0, 7)"}},
		{"coarse label out of range", func(dir string) {
			writeFile(t, filepath.Join(dir, "train.bin"), bad(1, record(20, 0)))
		}, []string{"train.bin", "record 1 at offset 3074", "coarse label 20"}},
		{"missing test.bin", func(dir string) { os.Remove(filepath.Join(dir, "test.bin")) }, []string{"test.bin is missing"}},
		{"too many class names", func(dir string) {
			writeFile(t, filepath.Join(dir, "fine_label_names.txt"), []byte(strings.Repeat("x\n", 101)))
		}, []string{"fine_label_names.txt", "101 class names"}},
		{"oversized", func(dir string) {
			// A sparse file claiming one record more than the limit: it
			// must be refused from its size, before any allocation.
			f, err := os.Create(filepath.Join(dir, "train.bin"))
			if err != nil {
				t.Fatal(err)
			}
			defer f.Close()
			if err := f.Truncate(int64(MaxRecords+1) * 3074); err != nil {
				t.Skip("cannot make a sparse file:", err)
			}
		}, []string{"train.bin", "1000001 records, more than the limit of 1000000"}},
		{"not a regular file", func(dir string) {
			os.Remove(filepath.Join(dir, "train.bin"))
			os.Mkdir(filepath.Join(dir, "train.bin"), 0o755)
		}, []string{"train.bin is not a regular file"}},
		{"no data", func(dir string) {
			os.Remove(filepath.Join(dir, "train.bin"))
			os.Remove(filepath.Join(dir, "test.bin"))
		}, []string{"neither CIFAR-100", "nor CIFAR-10"}},
		{"CIFAR-10 batch missing", func(dir string) {
			os.Remove(filepath.Join(dir, "train.bin"))
			os.Remove(filepath.Join(dir, "test.bin"))
			for _, n := range []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_4.bin", "data_batch_5.bin", "test_batch.bin"} {
				writeFile(t, filepath.Join(dir, n), cifar10File(0, 1))
			}
		}, []string{"data_batch_3.bin is missing"}},
		{"CIFAR-10 label out of range", func(dir string) {
			os.Remove(filepath.Join(dir, "train.bin"))
			os.Remove(filepath.Join(dir, "test.bin"))
			for _, n := range append(cifar10Train, "test_batch.bin") {
				writeFile(t, filepath.Join(dir, n), cifar10File(0, 1, 2))
			}
			writeFile(t, filepath.Join(dir, "test_batch.bin"), cifar10File(0, 1, 10))
		}, []string{"test_batch.bin", "record 1 at offset 3073", "label 10 out of range [0, 10)"}},
		{"CIFAR-10 truncated", func(dir string) {
			os.Remove(filepath.Join(dir, "train.bin"))
			os.Remove(filepath.Join(dir, "test.bin"))
			for _, n := range append(cifar10Train, "test_batch.bin") {
				writeFile(t, filepath.Join(dir, n), cifar10File(0, 1, 2))
			}
			writeFile(t, filepath.Join(dir, "data_batch_2.bin"), cifar10File(0, 1, 2)[:5000])
		}, []string{"data_batch_2.bin", "record 1 at offset 3073 is truncated (1927 of 3073 bytes)"}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			// Plain writes: WriteDir's fsyncs would make this test slow.
			dir := t.TempDir()
			writeFile(t, filepath.Join(dir, "train.bin"), good.Train.Encode())
			writeFile(t, filepath.Join(dir, "test.bin"), good.Test.Encode())
			writeFile(t, filepath.Join(dir, "fine_label_names.txt"), []byte("a\nb\nc\nd\ne\nf\ng\n"))
			tc.setup(dir)
			_, _, err := Load(dir)
			if err == nil {
				t.Fatal("no error")
			}
			for _, w := range tc.want {
				if !strings.Contains(err.Error(), w) {
					t.Errorf("error %q does not contain %q", err, w)
				}
			}
			if strings.Contains(err.Error(), "\n") {
				t.Errorf("error %q is not one line", err)
			}
		})
	}
	for _, dir := range []string{filepath.Join(t.TempDir(), "absent"), writeTemp(t)} {
		if _, _, err := Load(dir); err == nil || !strings.Contains(err.Error(), dir) {
			t.Errorf("Load(%s): error %v, want one naming it", dir, err)
		}
	}
}

func writeTemp(t *testing.T) string {
	p := filepath.Join(t.TempDir(), "file")
	writeFile(t, p, []byte("x"))
	return p
}

// TestWriteDirLeavesNoPartialSet makes the second file impossible to write
// and checks that the first is removed again and no temporary is left.
func TestWriteDirLeavesNoPartialSet(t *testing.T) {
	s := smallSynth(t, SynthConfig{Train: 3, Test: 2, Classes: 4, Seed: 1})
	dir := t.TempDir()
	if err := os.MkdirAll(filepath.Join(dir, "test.bin", "occupied"), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := WriteDir(dir, s.Train, s.Test); err == nil {
		t.Fatal("WriteDir over a directory named test.bin succeeded")
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 1 || entries[0].Name() != "test.bin" {
		var names []string
		for _, e := range entries {
			names = append(names, e.Name())
		}
		t.Errorf("directory holds %v after a failed write, want only the old test.bin", names)
	}
}
