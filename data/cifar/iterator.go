package cifar

import (
	"fmt"
	"math/rand/v2"
	"runtime"
	"slices"
	"sync"

	"github.com/psclip/psclip/data/dataset"
	"github.com/psclip/psclip/privacy"
	"github.com/psclip/psclip/tensor"
)

// IterConfig configures an Iterator.
type IterConfig struct {
	// Batch is the number of images per batch; the last batch of an epoch
	// holds the remainder (PyTorch's drop_last=False). With Poisson it is
	// the expected number.
	Batch int
	// Shuffle visits the images in a fresh random order every epoch.
	Shuffle bool
	// Poisson samples every batch afresh, as DP-SGD's accounting assumes:
	// each image joins it independently with probability q = Batch/N (1
	// for Batch ≥ N), so batch sizes vary and a batch may be empty; an
	// epoch is BatchesPerEpoch batches, ⌈N/Batch⌉, and a batch's images
	// come in ascending order. Shuffle must then be false, and Secret
	// set.
	Poisson bool
	// Secret keys the Poisson samples (privacy.Poisson): which images
	// join a batch is never a function of Seed, which the run's outputs
	// name, but of a key from crypto/rand that no file holds (or, for
	// reproductions that are not private, of a fixed seed's key).
	Secret *privacy.Secret
	// Augment is applied to every image (the zero value: none).
	Augment Augment
	// Norm turns pixels into network inputs.
	Norm Normalizer
	// Seed determines the shuffles and augmentations (never a Poisson
	// sample).
	Seed uint64
	// Workers is the number of goroutines that assemble a batch (0:
	// GOMAXPROCS). It changes the speed, never the batches.
	Workers int
}

// Position is where an Iterator stands: Index images of epoch Epoch have
// been delivered (with Poisson sampling: Index batches). All of an iterator's randomness is a function of its
// seed (and Poisson samples of its secret), the epoch and the image or
// batch, so its Position is its entire state: an
// iterator moved to a saved Position with Seek continues bit for bit as
// the original would have.
type Position struct {
	Epoch int `json:"epoch"`
	Index int `json:"index"`
}

// Iterator delivers a dataset as normalised, optionally augmented batches,
// epoch after epoch. The batches' images are drawn by data/dataset's
// samplers: a Shuffle (an epoch's order from the seed's stream) or a
// Poisson sampler (batch b of epoch e is the secret's sample (e, b)).
type Iterator struct {
	d     *Dataset
	cfg   IterConfig
	table *[Channels][256]float32
	pos   Position
	// shuffle draws the images of a batch with Shuffle, poisson with
	// Poisson; with neither, inOrder holds 0…N−1, the images in order.
	shuffle *dataset.Shuffle
	poisson *dataset.Poisson
	inOrder []int
	last    []int // the images of the batch Next returned last
	// applied is what AutoAugment did to each image of that batch.
	applied []Applied
	bufs    [][2][ImageBytes]byte
}

// NewIterator returns an iterator at the start of epoch 0.
func NewIterator(d *Dataset, cfg IterConfig) (*Iterator, error) {
	if cfg.Batch < 1 {
		return nil, fmt.Errorf("cifar: batch size %d, want at least 1", cfg.Batch)
	}
	if cfg.Poisson && cfg.Shuffle {
		return nil, fmt.Errorf("cifar: Poisson sampling draws every batch afresh; it does not shuffle")
	}
	if d.Len() == 0 {
		return nil, fmt.Errorf("cifar: empty dataset")
	}
	if err := cfg.Norm.Validate(); err != nil {
		return nil, err
	}
	if cfg.Workers <= 0 {
		cfg.Workers = runtime.GOMAXPROCS(0)
	}
	it := &Iterator{d: d, cfg: cfg, table: cfg.Norm.table(), bufs: make([][2][ImageBytes]byte, cfg.Workers)}
	var err error
	switch {
	case cfg.Poisson && cfg.Secret == nil:
		return nil, fmt.Errorf("cifar: Poisson sampling needs a Secret to key its samples")
	case cfg.Poisson:
		// A batch of N or more expects every image: q = 1.
		it.poisson, err = dataset.NewEpochPoisson(cfg.Secret, d.Len(), min(cfg.Batch, d.Len()), it.BatchesPerEpoch())
	case cfg.Shuffle:
		it.shuffle, err = dataset.NewShuffleFrom(d.Len(), cfg.Batch, false, func(e int) rand.Source {
			return stream(cfg.Seed, tagShuffle, uint64(e), 0)
		})
	default:
		it.inOrder = make([]int, d.Len())
		for i := range it.inOrder {
			it.inOrder[i] = i
		}
	}
	if err != nil {
		return nil, err
	}
	it.startEpoch(0)
	return it, nil
}

// Len is the number of images per epoch.
func (it *Iterator) Len() int { return it.d.Len() }

// BatchesPerEpoch is the number of batches of one epoch.
func (it *Iterator) BatchesPerEpoch() int { return (it.d.Len() + it.cfg.Batch - 1) / it.cfg.Batch }

// Position returns where the iterator stands.
func (it *Iterator) Position() Position { return it.pos }

// SampleRate is the probability q with which an image joins a batch under
// Poisson sampling, Batch/N (at most 1); 0 without Poisson sampling.
func (it *Iterator) SampleRate() float64 {
	if !it.cfg.Poisson {
		return 0
	}
	return min(1, float64(it.cfg.Batch)/float64(it.d.Len()))
}

// Seek moves the iterator to p, typically one saved by Position: a
// position between batches.
func (it *Iterator) Seek(p Position) error {
	n, b := it.d.Len(), it.cfg.Batch
	end := n
	if it.cfg.Poisson {
		end = it.BatchesPerEpoch()
	}
	if p.Epoch < 0 || p.Index < 0 || p.Index > end || !it.cfg.Poisson && p.Index < n && p.Index%b != 0 {
		return fmt.Errorf("cifar: position epoch %d index %d is not between batches of a %d-image epoch", p.Epoch, p.Index, n)
	}
	it.startEpoch(p.Epoch)
	it.pos.Index = p.Index
	var err error
	switch {
	case it.shuffle != nil:
		err = it.shuffle.Seek(p.Epoch, (p.Index+b-1)/b) // the epoch's end: its last batch drawn
	case it.poisson != nil:
		err = it.poisson.Seek(p.Epoch*it.BatchesPerEpoch() + p.Index)
	}
	return err
}

// startEpoch moves the iterator, and its sampler, to the start of epoch
// e ≥ 0.
func (it *Iterator) startEpoch(e int) {
	it.pos = Position{Epoch: e}
	it.last = nil
	var err error
	switch {
	case it.shuffle != nil:
		err = it.shuffle.Seek(e, 0)
	case it.poisson != nil:
		err = it.poisson.Seek(e * it.BatchesPerEpoch())
	}
	if err != nil {
		panic(err) // e ≥ 0: a position of every sampler
	}
}

// Next returns the next batch of the current epoch: x of shape
// [B, C, 32, 32] (C = 3, or 1 for a grey dataset) and the B labels. At the
// end of an epoch it returns ok = false and moves to the start of the next
// one. The returned tensor and labels are the caller's.
//
// With Poisson sampling the batch may be empty (x of shape [0, C, 32, 32]).
func (it *Iterator) Next() (x *tensor.Tensor, y []int32, ok bool) {
	if it.cfg.Poisson {
		return it.nextPoisson()
	}
	if it.pos.Index >= it.d.Len() {
		it.startEpoch(it.pos.Epoch + 1)
		return nil, nil, false
	}
	var idx []int
	if it.shuffle != nil {
		idx = it.shuffle.Next()
	} else {
		idx = it.inOrder[it.pos.Index:min(it.pos.Index+it.cfg.Batch, it.d.Len())]
	}
	x, y = it.batch(idx)
	it.pos.Index += len(idx)
	return x, y, true
}

// nextPoisson is Next with Poisson sampling: batch b of epoch e is the
// secret's sample (e, b), so it depends on nothing but the secret and its
// place.
func (it *Iterator) nextPoisson() (x *tensor.Tensor, y []int32, ok bool) {
	if it.pos.Index >= it.BatchesPerEpoch() {
		it.startEpoch(it.pos.Epoch + 1)
		return nil, nil, false
	}
	x, y = it.batch(it.poisson.Next())
	it.pos.Index++
	return x, y, true
}

// batch assembles the images idx into a batch, and notes them for Indices.
func (it *Iterator) batch(idx []int) (x *tensor.Tensor, y []int32) {
	x = tensor.New(len(idx), it.d.Channels(), Side, Side)
	y = make([]int32, len(idx))
	it.applied = slices.Grow(it.applied[:0], len(idx))[:len(idx)]
	workers := min(it.cfg.Workers, len(idx))
	var wg sync.WaitGroup
	for w := range workers {
		lo, hi := w*len(idx)/workers, (w+1)*len(idx)/workers
		wg.Go(func() { it.fill(x.Data, y, idx, lo, hi, &it.bufs[w]) })
	}
	wg.Wait()
	it.last = idx
	return x, y
}

// Applied returns what AutoAugment did to each image of the batch the
// last call of Next returned, in batch order (SubPolicy NoSubPolicy for
// every image without AutoAugment); nil when Indices is. The slice is the
// caller's.
func (it *Iterator) Applied() []Applied {
	if it.last == nil {
		return nil
	}
	return slices.Clone(it.applied)
}

// Indices returns the positions in the dataset of the images of the batch
// the last call of Next returned, in batch order: sample j of that batch is
// image Indices()[j]; nil after a Next that ended an epoch, or a Seek. The
// slice is the caller's.
func (it *Iterator) Indices() []int { return slices.Clone(it.last) }

// fill assembles samples lo..hi-1 of a batch. Each sample's randomness
// comes from its own stream keyed by (seed, epoch, image), so the result
// does not depend on how the batch is divided among workers.
func (it *Iterator) fill(x []float32, y []int32, idx []int, lo, hi int, buf *[2][ImageBytes]byte) {
	var pcg rand.PCG
	r := rand.New(&pcg)
	aug := it.cfg.Augment != Augment{}
	nc, size := it.d.Channels(), it.d.ImageSize()
	for j := lo; j < hi; j++ {
		i := idx[j]
		y[j] = int32(it.d.Labels[i])
		img := it.d.Image(i)
		it.applied[j] = Applied{SubPolicy: NoSubPolicy}
		if aug {
			pcg.Seed(seeds(it.cfg.Seed, tagSample, uint64(it.pos.Epoch), uint64(i)))
			im, tmp := Image{nc, Side, Side, buf[0][:size]}, Image{nc, Side, Side, buf[1][:size]}
			copy(im.Pix, img)
			it.applied[j] = it.cfg.Augment.Apply(im, tmp, r)
			img = im.Pix
		}
		out := x[j*size : (j+1)*size]
		for c := range nc {
			t := &it.table[c]
			plane := img[c*Side*Side : (c+1)*Side*Side]
			o := out[c*Side*Side : (c+1)*Side*Side]
			for k, v := range plane {
				o[k] = t[v]
			}
		}
	}
}
