package cifar

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
)

// ValidationSize is the default number of validation images held out of a
// training set of n images: a tenth, as the paper's 5,000 of 50,000, rounded
// down, but at least one whenever n ≥ 2 so that small synthetic sets still
// get a validation set; n < 2 gives 0.
func ValidationSize(n int) int {
	v := n / 10
	if v == 0 && n >= 2 {
		v = 1
	}
	return v
}

// Split divides d into a training set and a validation set of val images
// chosen uniformly at random from seed (the paper's seeded 45,000/5,000
// split of the CIFAR-100 training set is Split(d, 5000, seed)). Both keep
// the order the images have in d. val must be in [0, d.Len()).
func Split(d *Dataset, val int, seed uint64) (train, valid *Dataset, err error) {
	ti, vi, err := SplitIndices(d.Len(), val, seed)
	if err != nil {
		return nil, nil, err
	}
	return d.Subset(ti), d.Subset(vi), nil
}

// SplitIndices returns which images of a data set of n images Split puts
// in the training set and which in the validation set, each list in
// ascending order: image j of Split's training set is image train[j] of
// the data set.
func SplitIndices(n, val int, seed uint64) (train, valid []int, err error) {
	if val < 0 || val >= n {
		return nil, nil, fmt.Errorf("cifar: validation size %d out of range [0, %d)", val, n)
	}
	perm := rand.New(stream(seed, tagSplit, 0, 0)).Perm(n)
	train, valid = perm[:n-val], perm[n-val:]
	slices.Sort(train)
	slices.Sort(valid)
	return train, valid, nil
}

// Normalizer maps pixel bytes to the float inputs of a network, channel by
// channel: x = (v/255 − Mean[c]) / Std[c], as torchvision's ToTensor
// followed by Normalize. A grey image uses the entries of channel 0.
type Normalizer struct {
	Mean, Std [Channels]float32
}

// CIFAR100Norm holds the per-channel statistics of the CIFAR-100 training
// set commonly used in PyTorch recipes. psclip computes the statistics of
// the actual training split instead (Stats), which is the same for the real
// data up to rounding and right for synthetic data too.
var CIFAR100Norm = Normalizer{
	Mean: [Channels]float32{0.5071, 0.4865, 0.4409},
	Std:  [Channels]float32{0.2673, 0.2564, 0.2762},
}

// Stats returns the per-channel mean and (population) standard deviation
// of d's pixels on the [0, 1] scale. The sums are exact integers, so the
// result does not depend on the order of the images. For a grey dataset
// every channel gets the statistics of its one plane, which are those of
// the RGB image with that plane in all three channels.
func Stats(d *Dataset) Normalizer {
	var s1, s2 [Channels]uint64
	nc := d.Channels()
	for i := range d.Len() {
		img := d.Image(i)
		for c := range nc {
			for _, v := range img[c*Side*Side : (c+1)*Side*Side] {
				s1[c] += uint64(v)
				s2[c] += uint64(v) * uint64(v)
			}
		}
	}
	var n Normalizer
	count := float64(d.Len() * Side * Side)
	for c := range Channels {
		if c >= nc {
			n.Mean[c], n.Std[c] = n.Mean[0], n.Std[0]
			continue
		}
		mean := float64(s1[c]) / count
		sd := math.Sqrt(max(float64(s2[c])/count-mean*mean, 0))
		if sd == 0 {
			sd = 255 // a constant channel: leave it centred but unscaled
		}
		n.Mean[c] = float32(mean / 255)
		n.Std[c] = float32(sd / 255)
	}
	return n
}

// table returns the normalised value of every byte for every channel,
// computed in float32 in torchvision's order (divide by 255, subtract the
// mean, divide by the standard deviation).
func (n Normalizer) table() *[Channels][256]float32 {
	var t [Channels][256]float32
	for c := range Channels {
		for v := range 256 {
			t[c][v] = (float32(v)/255 - n.Mean[c]) / n.Std[c]
		}
	}
	return &t
}

// Validate reports a standard deviation that is not positive and finite.
func (n Normalizer) Validate() error {
	for c := range Channels {
		if !(n.Std[c] > 0) || math.IsInf(float64(n.Std[c]), 0) || math.IsNaN(float64(n.Mean[c])) || math.IsInf(float64(n.Mean[c]), 0) {
			return fmt.Errorf("cifar: normaliser channel %d has mean %v and standard deviation %v", c, n.Mean[c], n.Std[c])
		}
	}
	return nil
}

// Stream tags keep the random streams of different purposes apart.
const (
	tagSplit uint64 = iota + 1
	tagShuffle
	tagSample
	tagSynthProto
	tagSynthOutlier
	tagSynthTrain
	tagSynthTest
)

// seeds returns the PCG seed determined by (seed, tag, a, b) alone, so that
// a sample's randomness depends on which sample it is and not on the order
// or the goroutine in which it is processed.
func seeds(seed, tag, a, b uint64) (uint64, uint64) {
	return splitmix(seed ^ splitmix(tag)), splitmix(a ^ splitmix(b))
}

// stream returns a generator seeded with seeds(seed, tag, a, b).
func stream(seed, tag, a, b uint64) *rand.PCG { return rand.NewPCG(seeds(seed, tag, a, b)) }

// splitmix is the SplitMix64 finaliser: a bijective mixer that turns nearby
// integers into unrelated seeds.
func splitmix(x uint64) uint64 {
	x += 0x9e3779b97f4a7c15
	x = (x ^ x>>30) * 0xbf58476d1ce4e5b9
	x = (x ^ x>>27) * 0x94d049bb133111eb
	return x ^ x>>31
}
