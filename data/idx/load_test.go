package idx

import (
	"errors"
	"os"
	"path/filepath"
	"testing"

	"github.com/psclip/psclip/data/cifar"
)

// writeSet writes an MNIST-layout directory of n training and m test
// images of h×w pixels, image i of a split having pixel (y, x) = i+y+x and
// label i mod 7; every other file is compressed.
func writeSet(t *testing.T, n, m, h, w int) string {
	t.Helper()
	dir := t.TempDir()
	for k, s := range []struct {
		images, labels string
		n              int
	}{{trainImages, trainLabels, n}, {testImages, testLabels, m}} {
		pix, lab := make([]byte, 0, s.n*h*w), make([]byte, s.n)
		for i := range s.n {
			for y := range h {
				for x := range w {
					pix = append(pix, byte(i+y+x))
				}
			}
			lab[i] = byte(i % 7)
		}
		img, lbl := encode(pix, s.n, h, w), encode(lab, s.n)
		ni, nl := s.images, s.labels
		if k == 0 {
			img, ni = gz(img), ni+".gz"
		} else {
			lbl, nl = gz(lbl), nl+".gz"
		}
		write(t, filepath.Join(dir, ni), img)
		write(t, filepath.Join(dir, nl), lbl)
	}
	return dir
}

func write(t *testing.T, path string, data []byte) {
	t.Helper()
	if err := os.WriteFile(path, data, 0o644); err != nil {
		t.Fatal(err)
	}
}

func TestLoad(t *testing.T) {
	dir := writeSet(t, 9, 4, 28, 28)
	train, test, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []struct {
		d *cifar.Dataset
		n int
	}{{train, 9}, {test, 4}} {
		d := s.d
		if d.Len() != s.n || !d.Grey || d.Classes != 7 || len(d.Images) != s.n*32*32 {
			t.Fatalf("%d images, grey %v, %d classes, %d bytes; want %d grey images of 7 classes", d.Len(), d.Grey, d.Classes, len(d.Images), s.n)
		}
		for i := range d.Len() {
			if d.Labels[i] != byte(i%7) {
				t.Fatalf("image %d: label %d, want %d", i, d.Labels[i], i%7)
			}
			img := d.Image(i)
			for y := range 32 {
				for x := range 32 {
					want := byte(0) // the 2-pixel black border
					if y >= 2 && y < 30 && x >= 2 && x < 30 {
						want = byte(i + y - 2 + x - 2)
					}
					if img[y*32+x] != want {
						t.Fatalf("image %d pixel (%d, %d) = %d, want %d", i, y, x, img[y*32+x], want)
					}
				}
			}
		}
	}
	f, err := Detect(dir)
	want := []string{trainImages + ".gz", trainLabels, testImages, testLabels + ".gz"}
	for i, p := range f.Paths() {
		if err != nil || p != filepath.Join(dir, want[i]) {
			t.Errorf("Detect: file %d is %q (%v), want %s", i, p, err, want[i])
		}
	}
}

// TestLoadErrors checks the refusals that concern a directory rather than
// one file's bytes; each error names the file at fault.
func TestLoadErrors(t *testing.T) {
	t.Run("truncated image file", func(t *testing.T) {
		dir := writeSet(t, 3, 2, 28, 28)
		path := filepath.Join(dir, testImages)
		b, _ := os.ReadFile(path)
		write(t, path, b[:len(b)-100])
		_, _, err := Load(dir)
		var e *Error
		if !errors.As(err, &e) || e.File != path || !errors.Is(err, ErrTruncated) {
			t.Errorf("error %v, want a truncation naming %s", err, path)
		}
	})
	t.Run("counts disagree", func(t *testing.T) {
		dir := writeSet(t, 3, 2, 28, 28)
		write(t, filepath.Join(dir, testLabels+".gz"), gz(encode([]byte{1, 2, 3}, 3)))
		if _, _, err := Load(dir); err == nil {
			t.Error("2 images with 3 labels: no error")
		}
	})
	t.Run("labels of two dimensions", func(t *testing.T) {
		dir := writeSet(t, 3, 2, 28, 28)
		write(t, filepath.Join(dir, trainLabels), encode(make([]byte, 6), 3, 2))
		if _, _, err := Load(dir); err == nil {
			t.Error("no error")
		}
	})
	t.Run("images of two dimensions", func(t *testing.T) {
		dir := writeSet(t, 3, 2, 28, 28)
		write(t, filepath.Join(dir, testImages), encode(make([]byte, 6), 2, 3))
		if _, _, err := Load(dir); err == nil {
			t.Error("no error")
		}
	})
	t.Run("images too large", func(t *testing.T) {
		if _, _, err := Load(writeSet(t, 3, 2, 33, 20)); err == nil {
			t.Error("33×20 images: no error")
		}
	})
	t.Run("a file missing", func(t *testing.T) {
		dir := writeSet(t, 3, 2, 28, 28)
		os.Remove(filepath.Join(dir, testImages))
		var nf *NotFoundError
		if _, err := Detect(dir); err == nil || errors.As(err, &nf) {
			t.Errorf("error %v, want one naming the missing file", err)
		}
	})
	t.Run("no files", func(t *testing.T) {
		var nf *NotFoundError
		if _, err := Detect(t.TempDir()); !errors.As(err, &nf) {
			t.Errorf("error %v, want a *NotFoundError", err)
		}
	})
	t.Run("not a directory", func(t *testing.T) {
		dir := writeSet(t, 3, 2, 28, 28)
		if _, err := Detect(filepath.Join(dir, testImages)); err == nil {
			t.Error("no error")
		}
	})
}
