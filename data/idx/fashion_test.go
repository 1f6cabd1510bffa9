package idx

import (
	"crypto/sha256"
	"encoding/hex"
	"os"
	"slices"
	"testing"

	"github.com/psclip/psclip/data/cifar"
)

// fashionMNISTDir is where Debian's dataset-fashion-mnist package installs
// the Fashion-MNIST files.
const fashionMNISTDir = "/usr/share/datasets/fashion-mnist"

// TestFashionMNIST loads the real Fashion-MNIST files when the Debian
// package is installed (CI installs it) and checks them against values
// computed independently of this package, by Python's gzip and struct
// modules reading the files at the IDX offsets: counts, sizes, the
// classes' balance, and a few images' labels, pixel sums and SHA-256.
func TestFashionMNIST(t *testing.T) {
	if _, err := os.Stat(fashionMNISTDir); err != nil {
		t.Skipf("Fashion-MNIST is not installed (apt-get install dataset-fashion-mnist): %v", err)
	}
	train, test, err := Load(fashionMNISTDir)
	if err != nil {
		t.Fatal(err)
	}
	type image struct {
		i, label, sum int
		sha256        string // of the 28×28 bytes
	}
	splits := []struct {
		name   string
		d      *cifar.Dataset
		n      int
		pixels uint64 // the sum of every pixel of the split
		images []image
	}{
		{"train", train, 60000, 3431114169, []image{
			{0, 9, 76247, "5bd44e331a6d6998daf675700cd0c13dcd7af8ab954b7585124124da61459e7b"},
			{1, 0, 84598, "9cf80d28fd40cb6b47fbe6cc085cbcbaf769565e1d9181a533d2540d5b3bb095"},
			{2, 0, 28662, "0220e64fde1e176296fc6ad8482ac76309244552e0cf650d17244be76efccc61"},
			{59999, 5, 16684, "489c477715bd5275b2646b28941db83e4ff26ece5302728fcb7632e1be5110ac"},
		}},
		{"test", test, 10000, 573469082, []image{
			{0, 9, 33456, "ffc7351ed0f8bae542820866086177fa4e0b366b97bf9d998dffdb8dbe138787"},
			{1, 2, 100994, "25138519f4c25d3d91c3d84a3399331418e13a1aa7a85c97fab5e0da9e6b48bb"},
			{2, 1, 51520, "2914aef93f1fce9f49e0e4ffd6dee009b9e64c539414e27d7e2e0e8274495df8"},
			{9999, 5, 24390, "0e65cd3713adf40ebd419516c1a2256c9e24ad75e86a862368adafd141f4c1bb"},
		}},
	}
	for _, s := range splits {
		d := s.d
		if d.Len() != s.n || d.Classes != 10 || !d.Grey {
			t.Fatalf("%s: %d images of %d classes (grey %v), want %d of 10", s.name, d.Len(), d.Classes, d.Grey, s.n)
		}
		var perClass [10]int
		for _, l := range d.Labels {
			perClass[l]++
		}
		for c, cnt := range perClass {
			if cnt != s.n/10 {
				t.Errorf("%s: class %d has %d images, want %d", s.name, c, cnt, s.n/10)
			}
		}
		var total uint64
		for _, v := range d.Images {
			total += uint64(v)
		}
		if total != s.pixels {
			t.Errorf("%s: pixels sum to %d, want %d", s.name, total, s.pixels)
		}
		for _, im := range s.images {
			// The 28×28 image sits at rows and columns 2..29 of 32×32;
			// the border is black.
			var pix []byte
			for y, row := range slices.Collect(slices.Chunk(d.Image(im.i), 32)) {
				if y >= 2 && y < 30 {
					pix = append(pix, row[2:30]...)
				}
			}
			sum := 0
			for _, v := range pix {
				sum += int(v)
			}
			h := sha256.Sum256(pix)
			if int(d.Labels[im.i]) != im.label || sum != im.sum || hex.EncodeToString(h[:]) != im.sha256 {
				t.Errorf("%s image %d: label %d, pixel sum %d, sha256 %x; want %d, %d, %s", s.name, im.i, d.Labels[im.i], sum, h, im.label, im.sum, im.sha256)
			}
		}
	}
}
