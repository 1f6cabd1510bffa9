package cifar

import (
	"math"
	"slices"
	"testing"

	"github.com/psclip/psclip/privacy"
)

// poissonDraws returns the images of `batches` Poisson batches, read
// through Indices, and checks that x and y agree with them.
func poissonDraws(t *testing.T, it *Iterator, batches int) [][]int {
	t.Helper()
	var out [][]int
	for len(out) < batches {
		x, y, ok := it.Next()
		if !ok {
			continue
		}
		idx := it.Indices()
		if x.Dim(0) != len(idx) || len(y) != len(idx) || !slices.IsSorted(idx) {
			t.Fatalf("batch of %d images, %d labels, indices %v", x.Dim(0), len(y), idx)
		}
		out = append(out, idx)
	}
	return out
}

// Poisson sampling: batch sizes are Binomial(N, q) — mean Nq, variance
// Nq(1−q) within 5 standard errors over 3,000 batches — every image joins
// about q of the batches, empty batches happen (as often as (1−q)^N), an
// epoch is ⌈N/Batch⌉ batches, and the draws depend on the seed alone:
// an iterator moved to a saved position continues alike.
func TestPoissonSampling(t *testing.T) {
	const n, batch, batches = 200, 3, 3000
	d := smallSynth(t, SynthConfig{Train: n, Test: 1, Classes: 5, Seed: 1}).Train
	cfg := IterConfig{Batch: batch, Poisson: true, Norm: Stats(d), Seed: 9, Secret: privacy.NewSecret(9)}
	it, err := NewIterator(d, cfg)
	if err != nil {
		t.Fatal(err)
	}
	q := it.SampleRate()
	if q != float64(batch)/n || it.BatchesPerEpoch() != 67 {
		t.Fatalf("q %g, %d batches per epoch; want %g, 67", q, it.BatchesPerEpoch(), float64(batch)/n)
	}
	draws := poissonDraws(t, it, batches)
	var sum, sq float64
	empty := 0
	joined := make([]int, n)
	for _, b := range draws {
		k := float64(len(b))
		sum += k
		sq += k * k
		if len(b) == 0 {
			empty++
		}
		for _, i := range b {
			joined[i]++
		}
	}
	mean := sum / batches
	variance := sq/batches - mean*mean
	wantMean, wantVar := n*q, n*q*(1-q)
	// SE of the sample variance ≈ σ²·√(2/B) (the binomial's kurtosis is
	// near the normal's here).
	if math.Abs(mean-wantMean) > 5*math.Sqrt(wantVar/batches) || math.Abs(variance-wantVar) > 5*wantVar*math.Sqrt(2.0/batches) {
		t.Errorf("batch size mean %.3f variance %.3f, want %.3f and %.3f", mean, variance, wantMean, wantVar)
	}
	pEmpty := math.Pow(1-q, n)
	if math.Abs(float64(empty)/batches-pEmpty) > 5*math.Sqrt(pEmpty*(1-pEmpty)/batches) {
		t.Errorf("%d empty batches of %d, want about %.0f", empty, batches, pEmpty*batches)
	}
	for i, c := range joined {
		if math.Abs(float64(c)-batches*q) > 5*math.Sqrt(batches*q*(1-q)) {
			t.Errorf("image %d joined %d batches of %d, want about %.0f", i, c, batches, batches*q)
		}
	}
	// Resume mid-epoch: Seek to a saved position draws the same batches.
	it2, _ := NewIterator(d, cfg)
	poissonDraws(t, it2, 100)
	pos := it2.Position()
	rest := poissonDraws(t, it2, 50)
	it3, _ := NewIterator(d, cfg)
	if err := it3.Seek(pos); err != nil {
		t.Fatal(err)
	}
	if again := poissonDraws(t, it3, 50); !slices.EqualFunc(again, rest, slices.Equal) {
		t.Error("a resumed iterator draws other batches")
	}
	// q = 1: every image, every batch.
	// The samples are the secret's, not the seed's: two secrets from
	// crypto/rand draw other batches under one seed, and no Secret is
	// refused.
	secure := cfg
	secure.Secret = privacy.NewSecret(0)
	it4, _ := NewIterator(d, secure)
	it5, _ := NewIterator(d, cfg)
	if slices.EqualFunc(poissonDraws(t, it4, 100), poissonDraws(t, it5, 100), slices.Equal) {
		t.Error("two secrets draw the same batches")
	}
	if _, err := NewIterator(d, IterConfig{Batch: 3, Poisson: true, Norm: Stats(d), Seed: 9}); err == nil {
		t.Error("Poisson sampling without a secret accepted")
	}
	all, _ := NewIterator(d, IterConfig{Batch: n + 5, Poisson: true, Norm: Stats(d), Seed: 9, Secret: privacy.NewSecret(0)})
	if b := poissonDraws(t, all, 2); len(b[0]) != n || len(b[1]) != n || all.SampleRate() != 1 {
		t.Errorf("Batch ≥ N: batches of %d and %d images", len(b[0]), len(b[1]))
	}
	if _, err := NewIterator(d, IterConfig{Batch: 3, Poisson: true, Shuffle: true, Norm: Stats(d)}); err == nil {
		t.Error("Poisson with Shuffle accepted")
	}
}
