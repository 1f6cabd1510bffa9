package idx

import (
	"bytes"
	"path/filepath"
	"testing"

	"github.com/psclip/psclip/data/cifar"
)

// FuzzLoad writes arbitrary bytes as the image and label files of both
// splits, optionally gzip-compressed, and checks that Load never panics,
// and that what it accepts is consistent with the files: Decode reads the
// same arrays, images and labels agree in count, every image is padded
// onto a black 32×32 canvas, and every label is below the class count.
func FuzzLoad(f *testing.F) {
	f.Add(encode(seq(2*28*28), 2, 28, 28), encode([]byte{3, 9}, 2), false)
	f.Add(encode(seq(2*4*3), 2, 4, 3), encode([]byte{0, 1}, 2), true)
	f.Add(encode(seq(5), 1, 1, 5), encode([]byte{255}, 1), false)
	f.Add(encode(seq(2*28*28), 2, 28, 28)[:100], encode([]byte{3, 9}, 2), false)
	f.Add(encode(seq(1), 1, 1, 1), encode([]byte{1, 2}, 2), true)
	f.Add(encode(nil, 1<<15, 1<<15, 1), encode(nil, 0), false)
	f.Add([]byte{}, []byte{0x1f, 0x8b}, true)
	f.Fuzz(func(t *testing.T, images, labels []byte, compress bool) {
		dir := t.TempDir()
		img, lbl := images, labels
		if compress {
			img, lbl = gz(images), gz(labels)
		}
		for _, n := range []string{trainImages, testImages} {
			write(t, filepath.Join(dir, n), img)
		}
		for _, n := range []string{trainLabels, testLabels} {
			write(t, filepath.Join(dir, n), lbl)
		}
		train, test, err := Load(dir)
		if err != nil {
			if err.Error() == "" {
				t.Fatal("empty error message")
			}
			return
		}
		a, errA := Decode("images", img)
		l, errL := Decode("labels", lbl)
		if errA != nil || errL != nil {
			t.Fatalf("Load accepted what Decode refused: %v, %v", errA, errL)
		}
		if len(a.Dims) != 3 || len(l.Dims) != 1 || l.Dims[0] != a.Dims[0] || a.Dims[1] > 32 || a.Dims[2] > 32 {
			t.Fatalf("accepted images %v with labels %v", a.Dims, l.Dims)
		}
		n, h, w := a.Dims[0], a.Dims[1], a.Dims[2]
		for _, d := range []*cifar.Dataset{train, test} {
			if d.Len() != n || !d.Grey || len(d.Images) != n*32*32 || !bytes.Equal(d.Labels, l.Data) {
				t.Fatalf("%d labels and %d image bytes from %d images", d.Len(), len(d.Images), n)
			}
			for i := range n {
				var sum, inner int
				for _, v := range d.Image(i) {
					sum += int(v)
				}
				for _, v := range a.Data[i*h*w : (i+1)*h*w] {
					inner += int(v)
				}
				if sum != inner {
					t.Fatalf("image %d: padded pixels sum to %d, the file's to %d", i, sum, inner)
				}
			}
			for _, lab := range d.Labels {
				if int(lab) >= d.Classes {
					t.Fatalf("label %d of %d classes", lab, d.Classes)
				}
			}
		}
	})
}
