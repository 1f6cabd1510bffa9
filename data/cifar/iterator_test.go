package cifar

import (
	"math"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/tensor"
)

func TestValidationSize(t *testing.T) {
	for n, want := range map[int]int{50000: 5000, 45: 4, 19: 1, 5: 1, 2: 1, 1: 0, 0: 0} {
		if got := ValidationSize(n); got != want {
			t.Errorf("ValidationSize(%d) = %d, want %d", n, got, want)
		}
	}
}

func TestSplit(t *testing.T) {
	d := smallSynth(t, SynthConfig{Train: 50, Test: 1, Classes: 5, Seed: 1}).Train
	// Tag every image with its index so the split can be traced.
	for i := range d.Len() {
		d.Image(i)[0] = byte(i)
	}
	tr, va, err := Split(d, 7, 42)
	if err != nil {
		t.Fatal(err)
	}
	if tr.Len() != 43 || va.Len() != 7 || tr.Classes != 5 {
		t.Fatalf("split 50 into %d and %d", tr.Len(), va.Len())
	}
	var seen []int
	for _, part := range []*Dataset{tr, va} {
		prev := -1
		for i := range part.Len() {
			k := int(part.Image(i)[0])
			if k <= prev {
				t.Fatal("split does not keep the original order")
			}
			prev = k
			if part.Labels[i] != d.Labels[k] || part.Coarse[i] != d.Coarse[k] {
				t.Fatalf("image %d lost its labels", k)
			}
			seen = append(seen, k)
		}
	}
	slices.Sort(seen)
	for i, k := range seen {
		if i != k {
			t.Fatal("the two parts do not partition the set")
		}
	}
	// SplitIndices names the same images, in the same order.
	ti, vi, err := SplitIndices(d.Len(), 7, 42)
	if err != nil {
		t.Fatal(err)
	}
	for _, p := range []struct {
		part *Dataset
		idx  []int
	}{{tr, ti}, {va, vi}} {
		for j, k := range p.idx {
			if int(p.part.Image(j)[0]) != k {
				t.Fatalf("SplitIndices: image %d of a part is %d, Split's is %d", j, k, p.part.Image(j)[0])
			}
		}
	}
	_, va2, _ := Split(d, 7, 42)
	_, va3, _ := Split(d, 7, 43)
	if !sameDataset(va, va2) || sameDataset(va, va3) {
		t.Error("split is not a function of the seed")
	}
	for _, v := range []int{-1, 50} {
		if _, _, err := Split(d, v, 1); err == nil {
			t.Errorf("Split with %d of 50 held out: no error", v)
		}
	}
}

func TestStats(t *testing.T) {
	d := smallSynth(t, SynthConfig{Train: 20, Test: 1, Classes: 3, Seed: 1, Noise: 30}).Train
	n := Stats(d)
	for c := range Channels {
		var s, s2, cnt float64
		for i := range d.Len() {
			for _, v := range d.Image(i)[c*1024 : (c+1)*1024] {
				x := float64(v) / 255
				s += x
				s2 += x * x
				cnt++
			}
		}
		mean := s / cnt
		sd := math.Sqrt(s2/cnt - mean*mean)
		if math.Abs(float64(n.Mean[c])-mean) > 1e-6 || math.Abs(float64(n.Std[c])-sd) > 1e-6 {
			t.Errorf("channel %d: Stats %v±%v, direct %v±%v", c, n.Mean[c], n.Std[c], mean, sd)
		}
	}
}

// epoch collects every batch of one epoch.
func epoch(t *testing.T, it *Iterator) (xs []*tensor.Tensor, ys [][]int32) {
	t.Helper()
	for {
		x, y, ok := it.Next()
		if !ok {
			return xs, ys
		}
		xs, ys = append(xs, x), append(ys, y)
	}
}

func TestIteratorEpochs(t *testing.T) {
	d := smallSynth(t, SynthConfig{Train: 10, Test: 1, Classes: 10, Seed: 1}).Train
	norm := Normalizer{Mean: [3]float32{0.5, 0.4, 0.3}, Std: [3]float32{0.2, 0.25, 0.3}}
	it, err := NewIterator(d, IterConfig{Batch: 4, Shuffle: true, Norm: norm, Seed: 5})
	if err != nil {
		t.Fatal(err)
	}
	if it.BatchesPerEpoch() != 3 {
		t.Errorf("BatchesPerEpoch = %d, want 3", it.BatchesPerEpoch())
	}
	var orders [2][]int
	for e := range 2 {
		xs, ys := epoch(t, it)
		if len(xs) != 3 || xs[0].Dim(0) != 4 || xs[2].Dim(0) != 2 || len(ys[2]) != 2 {
			t.Fatalf("epoch %d: batches %v", e, xs)
		}
		if !slices.Equal(xs[0].Shape, []int{4, 3, 32, 32}) {
			t.Fatalf("batch shape %v", xs[0].Shape)
		}
		// Identify every delivered image by value, and check its
		// normalisation against a float64 computation.
		for b, x := range xs {
			for j := range x.Dim(0) {
				i := findImage(t, d, x.Data[j*ImageBytes:(j+1)*ImageBytes], norm)
				if ys[b][j] != int32(d.Labels[i]) {
					t.Fatalf("image %d delivered with label %d, want %d", i, ys[b][j], d.Labels[i])
				}
				orders[e] = append(orders[e], i)
			}
		}
		if got := it.Position(); got != (Position{Epoch: e + 1}) {
			t.Errorf("after epoch %d: position %+v", e, got)
		}
	}
	for e, o := range orders {
		s := slices.Sorted(slices.Values(o))
		if !slices.Equal(s, []int{0, 1, 2, 3, 4, 5, 6, 7, 8, 9}) {
			t.Errorf("epoch %d visited %v, not every image once", e, o)
		}
	}
	if slices.Equal(orders[0], orders[1]) {
		t.Error("two epochs in the same order")
	}
}

// findImage returns the index of the image in d that normalises to x.
func findImage(t *testing.T, d *Dataset, x []float32, n Normalizer) int {
	t.Helper()
	for i := range d.Len() {
		match := true
		for k, v := range d.Image(i) {
			c := k / 1024
			want := (float64(v)/255 - float64(n.Mean[c])) / float64(n.Std[c])
			if math.Abs(float64(x[k])-want) > 1e-5 {
				match = false
				break
			}
		}
		if match {
			return i
		}
	}
	t.Fatal("batch holds an image that is no normalised dataset image")
	return -1
}

// TestIteratorResumeAndWorkers runs 2½ epochs with augmentation, and
// checks that a fresh iterator moved to a saved position, and iterators
// with other worker counts, deliver bit-identical batches.
func TestIteratorResumeAndWorkers(t *testing.T) {
	d := smallSynth(t, SynthConfig{Train: 23, Test: 1, Classes: 4, Seed: 2, Noise: 10}).Train
	cfg := IterConfig{Batch: 5, Shuffle: true, Augment: Augment{CropFlip: true, AutoAugment: true}, Norm: Stats(d), Seed: 11, Workers: 1}
	// applied collects what AutoAugment did to every batch's images.
	var applied [][]Applied
	run := func(it *Iterator, batches int) (out []*tensor.Tensor, labels [][]int32) {
		applied = nil
		for len(out) < batches {
			if x, y, ok := it.Next(); ok {
				out, labels = append(out, x), append(labels, y)
				applied = append(applied, it.Applied())
			} else if it.Applied() != nil {
				t.Fatal("Applied after the end of an epoch")
			}
		}
		return out, labels
	}
	ref, _ := NewIterator(d, cfg)
	want, wantY := run(ref, 13)
	wantApplied := applied
	touched := 0
	for b, as := range wantApplied {
		if len(as) != len(wantY[b]) {
			t.Fatalf("batch %d: %d augmentations for %d images", b, len(as), len(wantY[b]))
		}
		for _, a := range as {
			if a.SubPolicy < 0 || a.SubPolicy >= len(CIFAR10Policy) {
				t.Fatalf("batch %d: sub-policy %d", b, a.SubPolicy)
			}
			if a.Ops != 0 {
				touched++
			}
		}
	}
	if touched == 0 {
		t.Error("AutoAugment applied no operation to any image")
	}
	for _, workers := range []int{2, 5, 7} {
		cfg.Workers = workers
		it, _ := NewIterator(d, cfg)
		got, gotY := run(it, 13)
		for b := range want {
			if !slices.Equal(got[b].Data, want[b].Data) || !slices.Equal(gotY[b], wantY[b]) || !slices.Equal(applied[b], wantApplied[b]) {
				t.Fatalf("%d workers: batch %d differs from 1 worker", workers, b)
			}
		}
	}
	// Stop after 8 batches (inside epoch 1), save, resume in a new iterator.
	first, _ := NewIterator(d, cfg)
	run(first, 8)
	pos := first.Position()
	if pos != (Position{Epoch: 1, Index: 15}) {
		t.Fatalf("position after 8 batches of 5 from 23 images: %+v", pos)
	}
	resumed, _ := NewIterator(d, cfg)
	if err := resumed.Seek(pos); err != nil {
		t.Fatal(err)
	}
	got, _ := run(resumed, 5)
	for b := range got {
		if !slices.Equal(got[b].Data, want[8+b].Data) || !slices.Equal(applied[b], wantApplied[8+b]) {
			t.Fatalf("resumed batch %d differs", 8+b)
		}
	}
	// Augmentation varies with the epoch: image order aside, epoch 0 and 1
	// of an unshuffled iterator differ.
	cfg.Shuffle = false
	plain, _ := NewIterator(d, cfg)
	e0, _ := epoch(t, plain)
	e1, _ := epoch(t, plain)
	if slices.Equal(e0[0].Data, e1[0].Data) {
		t.Error("the same augmentation in two epochs")
	}
}

func TestIteratorErrors(t *testing.T) {
	d := smallSynth(t, SynthConfig{Train: 3, Test: 1, Classes: 2, Seed: 1}).Train
	norm := Stats(d)
	if _, err := NewIterator(d, IterConfig{Batch: 0, Norm: norm}); err == nil {
		t.Error("batch 0: no error")
	}
	if _, err := NewIterator(d, IterConfig{Batch: 1}); err == nil {
		t.Error("zero standard deviation: no error")
	}
	if _, err := NewIterator(&Dataset{Classes: 2}, IterConfig{Batch: 1, Norm: norm}); err == nil {
		t.Error("empty dataset: no error")
	}
	it, _ := NewIterator(d, IterConfig{Batch: 2, Norm: norm})
	for _, p := range []Position{{-1, 0}, {0, -1}, {0, 4}, {0, 1}} { // {0, 1}: inside a batch
		if err := it.Seek(p); err == nil {
			t.Errorf("Seek(%+v): no error", p)
		}
	}
	if err := it.Seek(Position{Epoch: 3, Index: 3}); err != nil {
		t.Fatal(err)
	}
	if _, _, ok := it.Next(); ok || it.Position() != (Position{Epoch: 4}) {
		t.Errorf("Next at the end of an epoch: ok %v, position %+v", ok, it.Position())
	}
}

// The batches come from data/dataset's samplers in the order the image
// trainer's published runs were drawn in: epoch e shuffled by
// rand.Shuffle on the seed's stream (seed, tagShuffle, e, 0), and Poisson
// batch b of epoch e the secret's sample (e, b). Both computed here the
// way the iterator drew them before it used the samplers.
func TestSamplersKeepTheOrder(t *testing.T) {
	const n, batch = 23, 5
	d := smallSynth(t, SynthConfig{Train: n, Test: 1, Classes: 3, Seed: 1}).Train
	it, err := NewIterator(d, IterConfig{Batch: batch, Shuffle: true, Norm: Stats(d), Seed: 4})
	if err != nil {
		t.Fatal(err)
	}
	for e := range 3 {
		order := make([]int, n)
		for i := range order {
			order[i] = i
		}
		r := rand.New(stream(4, tagShuffle, uint64(e), 0))
		r.Shuffle(n, func(i, j int) { order[i], order[j] = order[j], order[i] })
		var got []int
		for {
			if _, _, ok := it.Next(); !ok {
				break
			}
			got = append(got, it.Indices()...)
		}
		if !slices.Equal(got, order) {
			t.Fatalf("epoch %d: images %v, want %v", e, got, order)
		}
	}
	secret := privacy.NewSecret(9)
	it, err = NewIterator(d, IterConfig{Batch: batch, Poisson: true, Norm: Stats(d), Secret: secret})
	if err != nil {
		t.Fatal(err)
	}
	p, _ := privacy.NewPoisson(secret, n, batch)
	for e := range 2 {
		for b := range it.BatchesPerEpoch() {
			it.Next()
			if got, want := it.Indices(), p.Sample(nil, uint64(e), uint64(b)); !slices.Equal(got, want) {
				t.Fatalf("epoch %d, batch %d: images %v, want %v", e, b, got, want)
			}
		}
		if _, _, ok := it.Next(); ok {
			t.Fatalf("epoch %d has more than %d batches", e, it.BatchesPerEpoch())
		}
	}
}
