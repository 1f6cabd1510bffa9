package cifar

import (
	"fmt"
	"math"
	"math/rand/v2"
	"runtime"
	"sync"
)

// OutlierKind says how the outliers of a synthetic training set are made.
type OutlierKind int

const (
	// Mixed makes half of the outliers (rounded up) Mislabelled and the
	// rest Corrupted.
	Mixed OutlierKind = iota
	// Mislabelled outliers are clean images carrying a wrong label, drawn
	// uniformly from the other classes.
	Mislabelled
	// Corrupted outliers keep their label but their pixels are uniform
	// noise: no trace of the class is left.
	Corrupted
)

var outlierNames = map[OutlierKind]string{Mixed: "mixed", Mislabelled: "mislabel", Corrupted: "corrupt"}

func (k OutlierKind) String() string { return outlierNames[k] }

// ParseOutlierKind parses "mixed", "mislabel" or "corrupt".
func ParseOutlierKind(s string) (OutlierKind, error) {
	for k, n := range outlierNames {
		if n == s {
			return k, nil
		}
	}
	return 0, fmt.Errorf("unknown outlier kind %q (want mixed, mislabel or corrupt)", s)
}

// SynthConfig describes a synthetic CIFAR-like data set.
type SynthConfig struct {
	Train, Test int     // number of training and test images, at least 1 each
	Classes     int     // number of classes, 2 to 100
	Seed        uint64  // everything is a function of the seed
	Noise       float64 // standard deviation of the per-pixel noise, in grey levels
	// Outliers is the fraction of training images that are outliers, in
	// [0, 1); round(Outliers·Train) of them exactly. The test set is clean.
	Outliers    float64
	OutlierKind OutlierKind
}

// Synthetic is a generated data set.
type Synthetic struct {
	Train, Test *Dataset
	// Outliers lists the training images that are outliers, ascending.
	Outliers []int
	// Kinds gives the kind of each outlier (Mislabelled or Corrupted).
	Kinds []OutlierKind
}

// Class structure of the generator.
const (
	synthPrototypes = 3 // prototypes per class
	synthWaves      = 3 // cosine waves per prototype channel
	synthShift      = 4 // largest shift of a sample, in pixels
)

// Synthesize generates a data set with learnable class structure: every
// class has a few prototypes, each a smooth random colour image (a base
// colour plus low-frequency cosine waves per channel); an image is one of
// its class's prototypes, circularly shifted by up to 4 pixels, with random
// contrast and brightness and Gaussian pixel noise. A small CNN separates
// the classes; the outliers are what per-sample clipping is meant to
// tame. Labels are balanced and in random order; the coarse label of class
// c is c/5, as CIFAR-100 groups five classes per superclass. The result is
// a function of cfg alone, whatever GOMAXPROCS is.
func Synthesize(cfg SynthConfig) (*Synthetic, error) {
	if err := cfg.Validate(); err != nil {
		return nil, fmt.Errorf("cifar: %w", err)
	}
	protos := prototypes(cfg)
	s := &Synthetic{
		Train: synthSet(cfg, protos, cfg.Train, tagSynthTrain),
		Test:  synthSet(cfg, protos, cfg.Test, tagSynthTest),
	}
	s.addOutliers(cfg)
	return s, nil
}

// Validate reports the first field of cfg that is out of range.
func (cfg SynthConfig) Validate() error {
	switch {
	case cfg.Train < 1 || cfg.Train > MaxRecords:
		return fmt.Errorf("%d training images, want 1 to %d", cfg.Train, MaxRecords)
	case cfg.Test < 1 || cfg.Test > MaxRecords:
		return fmt.Errorf("%d test images, want 1 to %d", cfg.Test, MaxRecords)
	case cfg.Classes < 2 || cfg.Classes > cifar100Labels:
		return fmt.Errorf("%d classes, want 2 to %d", cfg.Classes, cifar100Labels)
	case !(cfg.Outliers >= 0 && cfg.Outliers < 1):
		return fmt.Errorf("outlier fraction %v, want it in [0, 1)", cfg.Outliers)
	case !(cfg.Noise >= 0 && cfg.Noise <= 255):
		return fmt.Errorf("noise %v, want it in [0, 255]", cfg.Noise)
	case cfg.OutlierKind < Mixed || cfg.OutlierKind > Corrupted:
		return fmt.Errorf("unknown outlier kind %d", cfg.OutlierKind)
	}
	return nil
}

// prototype is one class prototype: a float image in channel-major order.
type prototype [ImageBytes]float32

func prototypes(cfg SynthConfig) []prototype {
	protos := make([]prototype, cfg.Classes*synthPrototypes)
	r := rand.New(stream(cfg.Seed, tagSynthProto, 0, 0))
	for p := range protos {
		for c := range Channels {
			base := 50 + 155*r.Float64()
			type wave struct{ fx, fy, amp, phase float64 }
			var waves [synthWaves]wave
			for k := range waves {
				fx, fy := r.IntN(3), r.IntN(3)
				if fx == 0 && fy == 0 {
					fx = 1
				}
				waves[k] = wave{float64(fx), float64(fy), 15 + 35*r.Float64(), 2 * math.Pi * r.Float64()}
			}
			for y := range Side {
				for x := range Side {
					v := base
					for _, w := range waves {
						v += w.amp * math.Cos(2*math.Pi*(w.fx*float64(x)+w.fy*float64(y))/Side+w.phase)
					}
					protos[p][(c*Side+y)*Side+x] = float32(v)
				}
			}
		}
	}
	return protos
}

// synthSet draws n clean images, balanced over the classes, in parallel:
// image i's randomness is keyed by (seed, tag, i).
func synthSet(cfg SynthConfig, protos []prototype, n int, tag uint64) *Dataset {
	d := &Dataset{Images: make([]byte, n*ImageBytes), Labels: make([]uint8, n), Coarse: make([]uint8, n), Classes: cfg.Classes}
	for i, k := range rand.New(stream(cfg.Seed, tag, math.MaxUint64, 0)).Perm(n) {
		d.Labels[i] = uint8(k % cfg.Classes)
		d.Coarse[i] = d.Labels[i] / 5
	}
	workers := runtime.GOMAXPROCS(0)
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			var pcg rand.PCG
			r := rand.New(&pcg)
			for i := w * n / workers; i < (w+1)*n/workers; i++ {
				pcg.Seed(seeds(cfg.Seed, tag, uint64(i), 0))
				p := &protos[int(d.Labels[i])*synthPrototypes+r.IntN(synthPrototypes)]
				sx, sy := r.IntN(2*synthShift+1)-synthShift, r.IntN(2*synthShift+1)-synthShift
				gain, offset := 0.7+0.6*r.Float64(), 50*r.Float64()-25
				img := d.Image(i)
				for c := range Channels {
					for y := range Side {
						for x := range Side {
							v := float64(p[(c*Side+(y+sy+Side)%Side)*Side+(x+sx+Side)%Side])
							v = 128 + gain*(v-128) + offset + cfg.Noise*r.NormFloat64()
							img[(c*Side+y)*Side+x] = byte(min(max(math.Round(v), 0), 255))
						}
					}
				}
			}
		})
	}
	wg.Wait()
	return d
}

// addOutliers turns a random round(Outliers·Train) of the training images
// into outliers.
func (s *Synthetic) addOutliers(cfg SynthConfig) {
	n := int(math.Round(cfg.Outliers * float64(cfg.Train)))
	if n == 0 {
		return
	}
	r := rand.New(stream(cfg.Seed, tagSynthOutlier, 0, 0))
	chosen := r.Perm(cfg.Train)[:n]
	kinds := make(map[int]OutlierKind, n)
	for rank, i := range chosen {
		k := cfg.OutlierKind
		if k == Mixed {
			k = Corrupted
			if rank < (n+1)/2 {
				k = Mislabelled
			}
		}
		kinds[i] = k
	}
	d := s.Train
	for i := range d.Len() {
		k, ok := kinds[i]
		if !ok {
			continue
		}
		s.Outliers = append(s.Outliers, i)
		s.Kinds = append(s.Kinds, k)
		if k == Mislabelled {
			d.Labels[i] = uint8((int(d.Labels[i]) + 1 + r.IntN(d.Classes-1)) % d.Classes)
			d.Coarse[i] = d.Labels[i] / 5
		} else {
			img := d.Image(i)
			for j := range img {
				img[j] = byte(r.Uint32())
			}
		}
	}
}
