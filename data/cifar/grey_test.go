package cifar

import (
	"math"
	"math/rand/v2"
	"path/filepath"
	"slices"
	"testing"
)

// greySet returns n random grey images whose first pixel is their index.
func greySet(n, classes int) *Dataset {
	r := rand.New(rand.NewPCG(3, 4))
	d := &Dataset{Images: make([]byte, n*Side*Side), Labels: make([]uint8, n), Classes: classes, Grey: true}
	for i := range d.Images {
		d.Images[i] = byte(r.IntN(256))
	}
	for i := range n {
		d.Image(i)[0] = byte(i)
		d.Labels[i] = uint8(r.IntN(classes))
	}
	return d
}

func TestGreyStats(t *testing.T) {
	d := greySet(7, 3)
	var s, s2 float64
	for _, v := range d.Images {
		x := float64(v) / 255
		s, s2 = s+x, s2+x*x
	}
	mean := s / float64(len(d.Images))
	sd := math.Sqrt(s2/float64(len(d.Images)) - mean*mean)
	n := Stats(d)
	for c := range Channels {
		if math.Abs(float64(n.Mean[c])-mean) > 1e-6 || math.Abs(float64(n.Std[c])-sd) > 1e-6 {
			t.Errorf("channel %d: Stats %v±%v, want the grey plane's %v±%v", c, n.Mean[c], n.Std[c], mean, sd)
		}
	}
}

// TestGreyIterator checks a grey dataset's batches: one plane per image,
// normalised with channel 0's statistics, and Indices naming the image of
// every sample.
func TestGreyIterator(t *testing.T) {
	d := greySet(9, 4)
	norm := Normalizer{Mean: [3]float32{0.3, 9, 9}, Std: [3]float32{0.2, 9, 9}}
	it, err := NewIterator(d, IterConfig{Batch: 4, Shuffle: true, Norm: norm, Seed: 2})
	if err != nil {
		t.Fatal(err)
	}
	var seen []int
	for {
		x, y, ok := it.Next()
		if !ok {
			break
		}
		idx := it.Indices()
		if !slices.Equal(x.Shape, []int{len(y), 1, Side, Side}) || len(idx) != len(y) {
			t.Fatalf("batch of shape %v with %d labels and %d indices", x.Shape, len(y), len(idx))
		}
		for j, i := range idx {
			if y[j] != int32(d.Labels[i]) {
				t.Fatalf("sample %d: label %d, image %d has %d", j, y[j], i, d.Labels[i])
			}
			for k, v := range d.Image(i) {
				want := (float64(v)/255 - 0.3) / 0.2
				if got := float64(x.Data[j*Side*Side+k]); math.Abs(got-want) > 1e-5 {
					t.Fatalf("sample %d pixel %d: %v, want %v", j, k, got, want)
				}
			}
		}
		seen = append(seen, idx...)
	}
	if it.Indices() != nil {
		t.Error("Indices after the end of an epoch must be nil")
	}
	slices.Sort(seen)
	if !slices.Equal(seen, []int{0, 1, 2, 3, 4, 5, 6, 7, 8}) {
		t.Errorf("one epoch visited %v", seen)
	}
}

// TestGreyAugment runs AutoAugment and crop-and-flip on grey images: the
// batches do not depend on the number of workers, and they differ from the
// plain ones.
func TestGreyAugment(t *testing.T) {
	d := greySet(6, 2)
	cfg := IterConfig{Batch: 6, Augment: Augment{CropFlip: true, AutoAugment: true}, Norm: Stats(d), Seed: 8, Workers: 1}
	one, _ := NewIterator(d, cfg)
	cfg.Workers = 3
	three, _ := NewIterator(d, cfg)
	cfg.Augment = Augment{}
	plain, _ := NewIterator(d, cfg)
	a, _, _ := one.Next()
	b, _, _ := three.Next()
	p, _, _ := plain.Next()
	if !slices.Equal(a.Data, b.Data) {
		t.Error("augmented grey batches depend on the number of workers")
	}
	if slices.Equal(a.Data, p.Data) {
		t.Error("augmentation left every grey image unchanged")
	}
}

func TestGreySubsetAndWrite(t *testing.T) {
	d := greySet(5, 2)
	tr, va, err := Split(d, 2, 1)
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range []*Dataset{tr, va} {
		if !s.Grey || len(s.Images) != s.Len()*Side*Side {
			t.Fatalf("a split of a grey set: grey %v, %d bytes for %d images", s.Grey, len(s.Images), s.Len())
		}
		for i := range s.Len() {
			k := int(s.Image(i)[0])
			if !slices.Equal(s.Image(i), d.Image(k)) || s.Labels[i] != d.Labels[k] {
				t.Fatalf("image %d of a split is not image %d of the set", i, k)
			}
		}
	}
	d.Coarse = make([]uint8, d.Len())
	if err := WriteDir(filepath.Join(t.TempDir(), "out"), d, d); err == nil {
		t.Error("WriteDir wrote grey images as CIFAR-100")
	}
}
