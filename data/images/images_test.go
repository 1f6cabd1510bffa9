package images

import (
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/data/idx"
)

// writeCIFAR writes a small synthetic CIFAR-100 set into dir.
func writeCIFAR(t *testing.T, dir string) {
	t.Helper()
	s, err := cifar.Synthesize(cifar.SynthConfig{Train: 6, Test: 2, Classes: 3, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	if err := cifar.WriteDir(dir, s.Train, s.Test); err != nil {
		t.Fatal(err)
	}
}

// writeIDX writes an MNIST-layout set of 3 training and 2 test images of
// 28×28 into dir, raw.
func writeIDX(t *testing.T, dir string) {
	t.Helper()
	file := func(data []byte, dims ...int) []byte {
		b := []byte{0, 0, 8, byte(len(dims))}
		for _, d := range dims {
			b = binary.BigEndian.AppendUint32(b, uint32(d))
		}
		return append(b, data...)
	}
	for name, data := range map[string][]byte{
		"train-images-idx3-ubyte": file(make([]byte, 3*28*28), 3, 28, 28),
		"train-labels-idx1-ubyte": file([]byte{0, 1, 2}, 3),
		"t10k-images-idx3-ubyte":  file(make([]byte, 2*28*28), 2, 28, 28),
		"t10k-labels-idx1-ubyte":  file([]byte{1, 0}, 2),
	} {
		if err := os.WriteFile(filepath.Join(dir, name), data, 0o644); err != nil {
			t.Fatal(err)
		}
	}
}

func TestDetectAndLoad(t *testing.T) {
	cifarDir, idxDir := t.TempDir(), t.TempDir()
	writeCIFAR(t, cifarDir)
	writeIDX(t, idxDir)
	for _, tt := range []struct {
		dir      string
		format   Format
		grey     bool
		nTrain   int
		channels int
	}{
		{cifarDir, CIFAR100, false, 6, 3},
		{idxDir, IDX, true, 3, 1},
	} {
		train, test, src, err := Load(tt.dir)
		if err != nil {
			t.Fatal(err)
		}
		if src.Format != tt.format || src.Dir != tt.dir || train.Len() != tt.nTrain || train.Grey != tt.grey || test.Channels() != tt.channels {
			t.Errorf("%s: format %s, %d training images, grey %v, %d channels", tt.dir, src.Format, train.Len(), train.Grey, test.Channels())
		}
	}
}

func TestDetectErrors(t *testing.T) {
	both := t.TempDir()
	writeCIFAR(t, both)
	writeIDX(t, both)
	if _, err := Detect(both); err == nil {
		t.Error("a directory holding CIFAR and IDX files: no error")
	}
	partial := t.TempDir()
	writeIDX(t, partial)
	os.Remove(filepath.Join(partial, "t10k-labels-idx1-ubyte"))
	var nf *NotFoundError
	if _, err := Detect(partial); err == nil || errors.As(err, &nf) {
		t.Errorf("a partial IDX set: error %v, want one naming the missing file", err)
	}
	empty := t.TempDir()
	if _, err := Detect(empty); !errors.As(err, &nf) || nf.Dir != empty {
		t.Errorf("an empty directory: error %v, want a *NotFoundError", err)
	}
	if _, err := Detect(filepath.Join(empty, "missing")); err == nil || errors.As(err, &nf) {
		t.Errorf("a missing directory: error %v", err)
	}
}

// Issue 26: the parts of an image set must agree: test images of the
// training images' size, labels a set 0…C−1 that the training split
// covers (a stray label of 200 would make a 201-class model), every test
// label among them, and at least two classes. Each is refused with an
// error naming the file at fault; a good set loads.
func TestSplitsDisagreeRefused(t *testing.T) {
	split := func(labels []byte, side int) (images, labs []byte) {
		head := func(dims ...int) []byte {
			b := []byte{0, 0, 8, byte(len(dims))}
			for _, d := range dims {
				b = binary.BigEndian.AppendUint32(b, uint32(d))
			}
			return b
		}
		return append(head(len(labels), side, side), make([]byte, len(labels)*side*side)...), append(head(len(labels)), labels...)
	}
	var (
		se *idx.SplitError
		oc *OneClassError
	)
	for _, c := range []struct {
		name                  string
		trainLabels, testLabs []byte
		trainSide, testSide   int
		want                  any // nil: loads
		msg                   string
	}{
		{"agree", []byte{0, 1, 2, 1}, []byte{2, 0}, 28, 28, nil, ""},
		{"test images of another size", []byte{0, 1, 2, 1}, []byte{2, 0}, 28, 20, &se, "20×20 images, but the training images"},
		{"a training label of 200", []byte{0, 1, 200, 1}, []byte{1, 0}, 28, 28, &se, "the labels run to 200, but 198 of the classes 0…200 have no training image (the first: 2)"},
		{"a test label no training image has", []byte{0, 1, 0, 1}, []byte{1, 2}, 28, 28, &se, "test image 1 has label 2, a class no training image has (0…1)"},
		{"one class", []byte{3, 3, 3}, []byte{3}, 28, 28, &se, "have no training image"},
		{"one class 0", []byte{0, 0, 0}, []byte{0}, 28, 28, &oc, "every training image has label 0; a classifier needs at least 2 classes"},
	} {
		dir := t.TempDir()
		ti, tl := split(c.trainLabels, c.trainSide)
		vi, vl := split(c.testLabs, c.testSide)
		for name, b := range map[string][]byte{"train-images-idx3-ubyte": ti, "train-labels-idx1-ubyte": tl, "t10k-images-idx3-ubyte": vi, "t10k-labels-idx1-ubyte": vl} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
		_, _, _, err := Load(dir)
		switch {
		case c.want == nil && err != nil:
			t.Errorf("%s: %v", c.name, err)
		case c.want != nil && (!errors.As(err, c.want) || !strings.Contains(err.Error(), c.msg)):
			t.Errorf("%s: %v, want a %T saying %q", c.name, err, c.want, c.msg)
		}
	}
}
