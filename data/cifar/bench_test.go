package cifar

import (
	"math/rand/v2"
	"testing"
)

// BenchmarkAutoAugment augments one CIFAR image per iteration, as the
// paper's training does.
func BenchmarkAutoAugment(b *testing.B) {
	benchAugment(b, Augment{AutoAugment: true})
}

// BenchmarkCropFlip is the cheap alternative augmentation.
func BenchmarkCropFlip(b *testing.B) {
	benchAugment(b, Augment{CropFlip: true})
}

func benchAugment(b *testing.B, a Augment) {
	src := randomImage(3, Side, Side, 1).Pix
	img, scratch := make([]byte, ImageBytes), make([]byte, ImageBytes)
	r := rand.New(rand.NewPCG(1, 2))
	for b.Loop() {
		copy(img, src)
		a.Apply(CIFARImage(img), CIFARImage(scratch), r)
	}
	b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "img/s")
}

// BenchmarkBatch assembles shuffled batches of 128: normalisation only
// (evaluation), and with AutoAugment (training), with GOMAXPROCS workers.
func BenchmarkBatch(b *testing.B) {
	s, err := Synthesize(SynthConfig{Train: 1024, Test: 1, Classes: 10, Seed: 1, Noise: 20})
	if err != nil {
		b.Fatal(err)
	}
	for _, bc := range []struct {
		name string
		aug  Augment
	}{{"plain", Augment{}}, {"autoaugment", Augment{AutoAugment: true}}} {
		b.Run(bc.name, func(b *testing.B) {
			it, err := NewIterator(s.Train, IterConfig{Batch: 128, Shuffle: true, Augment: bc.aug, Norm: Stats(s.Train), Seed: 1})
			if err != nil {
				b.Fatal(err)
			}
			images := 0
			for b.Loop() {
				x, _, ok := it.Next()
				if !ok {
					x, _, _ = it.Next()
				}
				images += x.Dim(0)
			}
			b.ReportMetric(float64(images)/b.Elapsed().Seconds(), "img/s")
		})
	}
}

// BenchmarkSynthesize generates 1,000 training and 100 test images.
func BenchmarkSynthesize(b *testing.B) {
	for b.Loop() {
		if _, err := Synthesize(SynthConfig{Train: 1000, Test: 100, Classes: 10, Seed: 1, Noise: 24, Outliers: 0.1}); err != nil {
			b.Fatal(err)
		}
	}
	b.ReportMetric(1100*float64(b.N)/b.Elapsed().Seconds(), "img/s")
}
