// Package labelnoise corrupts a known share of training labels on purpose,
// and measures how well a per-sample decision — a sample being clipped —
// picks out the corrupted ones.
//
// The paper explains per-sample clipping's advantage by a few samples with
// very large gradients whose influence clipping limits; mislabelled images
// are such samples, and with labels flipped on purpose it is known which
// they are. Apply flips them; Detection scores clipping as a detector of
// them (precision: the share of clipped samples that are mislabelled,
// against NoisyShare, what a random choice achieves; recall: the share of
// mislabelled samples that are clipped).
package labelnoise

import (
	"fmt"
	"math"
	"math/rand/v2"
	"slices"

	"github.com/psclip/psclip/setting"
)

// Config says which labels Apply replaces.
type Config struct {
	// Fraction is the share of the images whose label is replaced, in
	// [0, 1): exactly round(Fraction·N) of N images (halves round up).
	Fraction float64
	// Asymmetric replaces class k by class (k+1) mod C, the same other
	// class for every image of a class (a systematic confusion); otherwise
	// each new label is drawn uniformly from the C−1 other classes.
	Asymmetric bool
	// Seed determines the images chosen and their new labels.
	Seed uint64
}

// Validate checks that Fraction is in [0, 1); a bad value is a
// *setting.Error.
func (c Config) Validate() error { return setting.Fraction("Fraction", c.Fraction) }

// Count is the number of images of n whose label Apply replaces:
// round(Fraction·n) (setting.ShareCount).
func (c Config) Count(n int) int { return setting.ShareCount(c.Fraction, n) }

// noiseStream keeps label noise's random stream apart from the others
// drawn from a run's seed ("labels").
const noiseStream = 0x6c6162656c73

// Apply replaces, in place, the labels of exactly cfg.Count(len(labels))
// images, chosen uniformly without replacement, each by a different class
// of the classes 0..classes−1, and returns the indices of those images in
// ascending order. The result is a function of the labels, classes and
// cfg alone. Apply it to the training split only, so that validation and
// test accuracy are measured on the true labels. A label outside
// [0, classes) is an error, as is noise with fewer than two classes.
func Apply(labels []uint8, classes int, cfg Config) ([]int, error) {
	if err := cfg.Validate(); err != nil {
		return nil, err
	}
	k := cfg.Count(len(labels))
	if k > 0 && (classes < 2 || classes > 256) {
		return nil, fmt.Errorf("labelnoise: %d classes; label noise needs 2 to 256", classes)
	}
	for i, l := range labels {
		if int(l) >= classes {
			return nil, fmt.Errorf("labelnoise: image %d has label %d of %d classes", i, l, classes)
		}
	}
	r := rand.New(rand.NewPCG(cfg.Seed, noiseStream))
	noisy := r.Perm(len(labels))[:k]
	slices.Sort(noisy)
	for _, i := range noisy {
		shift := 1
		if !cfg.Asymmetric {
			shift += r.IntN(classes - 1)
		}
		labels[i] = uint8((int(labels[i]) + shift) % classes)
	}
	return noisy, nil
}

// Mask returns n flags, true at the given indices: which of n images are
// noisy.
func Mask(n int, noisy []int) []bool {
	m := make([]bool, n)
	for _, i := range noisy {
		m[i] = true
	}
	return m
}

// Detection counts, over the samples added to it, how many were clipped
// and how many mislabelled. The zero value is empty.
type Detection struct {
	Samples      int `json:"samples"`
	Noisy        int `json:"noisy"`         // mislabelled samples
	Clipped      int `json:"clipped"`       // clipped samples
	NoisyClipped int `json:"noisy_clipped"` // samples both mislabelled and clipped
}

// Add counts a batch: sample j is image images[j] of a data set whose
// noisy images noisy marks (Mask), and clipped[j] says whether it was
// clipped. clipped and images must have the same length.
func (d *Detection) Add(clipped []bool, images []int, noisy []bool) {
	if len(clipped) != len(images) {
		panic(fmt.Sprintf("labelnoise: %d clip decisions for %d images", len(clipped), len(images)))
	}
	for j, c := range clipped {
		n := noisy[images[j]]
		d.Samples++
		if n {
			d.Noisy++
		}
		if c {
			d.Clipped++
			if n {
				d.NoisyClipped++
			}
		}
	}
}

// Precision is the share of clipped samples that were mislabelled; NaN
// when none was clipped.
func (d Detection) Precision() float64 { return ratio(d.NoisyClipped, d.Clipped) }

// Recall is the share of mislabelled samples that were clipped; NaN when
// none was mislabelled.
func (d Detection) Recall() float64 { return ratio(d.NoisyClipped, d.Noisy) }

// NoisyShare is the share of samples that were mislabelled: the precision
// of clipping samples at random. NaN when there are no samples.
func (d Detection) NoisyShare() float64 { return ratio(d.Noisy, d.Samples) }

func ratio(a, b int) float64 {
	if b == 0 {
		return math.NaN()
	}
	return float64(a) / float64(b)
}
