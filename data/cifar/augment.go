package cifar

import (
	"math"
	"math/rand/v2"
)

// A PolicyOp is one step of an AutoAugment sub-policy: apply Op with
// probability Prob at magnitude bin Bin (ignored by ops without a
// magnitude).
type PolicyOp struct {
	Op   Op
	Prob float32
	Bin  int
}

// SubPolicy is a pair of operations applied in order.
type SubPolicy [2]PolicyOp

// CIFAR10Policy is torchvision's AutoAugmentPolicy.CIFAR10: the 25
// sub-policies AutoAugment learned on CIFAR-10, in torchvision's order.
var CIFAR10Policy = [25]SubPolicy{
	{{Invert, 0.1, 0}, {Contrast, 0.2, 6}},
	{{Rotate, 0.7, 2}, {TranslateX, 0.3, 9}},
	{{Sharpness, 0.8, 1}, {Sharpness, 0.9, 3}},
	{{ShearY, 0.5, 8}, {TranslateY, 0.7, 9}},
	{{AutoContrast, 0.5, 0}, {Equalize, 0.9, 0}},
	{{ShearY, 0.2, 7}, {Posterize, 0.3, 7}},
	{{Color, 0.4, 3}, {Brightness, 0.6, 7}},
	{{Sharpness, 0.3, 9}, {Brightness, 0.7, 9}},
	{{Equalize, 0.6, 0}, {Equalize, 0.5, 0}},
	{{Contrast, 0.6, 7}, {Sharpness, 0.6, 5}},
	{{Color, 0.7, 7}, {TranslateX, 0.5, 8}},
	{{Equalize, 0.3, 0}, {AutoContrast, 0.4, 0}},
	{{TranslateY, 0.4, 3}, {Sharpness, 0.2, 6}},
	{{Brightness, 0.9, 6}, {Color, 0.2, 8}},
	{{Solarize, 0.5, 2}, {Invert, 0.0, 0}},
	{{Equalize, 0.2, 0}, {AutoContrast, 0.6, 0}},
	{{Equalize, 0.2, 0}, {Equalize, 0.6, 0}},
	{{Color, 0.9, 9}, {Equalize, 0.6, 0}},
	{{AutoContrast, 0.8, 0}, {Solarize, 0.2, 8}},
	{{Brightness, 0.1, 3}, {Color, 0.7, 0}},
	{{Solarize, 0.4, 5}, {AutoContrast, 0.9, 0}},
	{{TranslateY, 0.9, 9}, {TranslateY, 0.7, 9}},
	{{AutoContrast, 0.9, 0}, {Solarize, 0.8, 3}},
	{{Equalize, 0.8, 0}, {Invert, 0.1, 0}},
	{{TranslateY, 0.7, 9}, {AutoContrast, 0.9, 0}},
}

// NumBins is the number of magnitude bins of torchvision's AutoAugment.
const NumBins = 10

// Magnitude returns the unsigned magnitude of op at bin (0 ≤ bin < NumBins)
// for a w×h image, as torchvision's AutoAugment._augmentation_space(10,
// (h, w)) tabulates it (in float32, like torch.linspace), and whether the
// op takes a random sign.
func Magnitude(op Op, bin, w, h int) (m float64, signed bool) {
	switch op {
	case ShearX, ShearY:
		return linspace(0, 0.3, bin), true
	case TranslateX:
		return linspace(0, float32(150.0/331.0*float64(w)), bin), true
	case TranslateY:
		return linspace(0, float32(150.0/331.0*float64(h)), bin), true
	case Rotate:
		return linspace(0, 30, bin), true
	case Brightness, Color, Contrast, Sharpness:
		return linspace(0, 0.9, bin), true
	case Posterize:
		// 8 − round(arange(bins) / ((bins−1)/4)), rounding half to even.
		return 8 - math.RoundToEven(float64(float32(bin)/float32(float64(NumBins-1)/4))), false
	case Solarize:
		return linspace(255, 0, bin), false
	}
	return 0, false
}

// linspace is element i of torch.linspace(start, end, NumBins) in float32,
// which computes the two halves from opposite ends.
func linspace(start, end float32, i int) float64 {
	step := (end - start) / float32(NumBins-1)
	if i < NumBins/2 {
		return float64(start + float32(step*float32(i)))
	}
	return float64(end - float32(step*float32(NumBins-1-i)))
}

// An OpSet is a set of operations: bit op is set for op.
type OpSet uint16

// Has reports whether op is in the set.
func (s OpSet) Has(op Op) bool { return s&(1<<op) != 0 }

// Applied is what AutoAugment did to one image: the index of the
// sub-policy it drew in its policy (NoSubPolicy without AutoAugment) and
// the operations of that sub-policy it applied (none, one or both: each
// runs with its own probability).
type Applied struct {
	SubPolicy int
	Ops       OpSet
}

// NoSubPolicy is Applied.SubPolicy of an image AutoAugment did not touch.
const NoSubPolicy = -1

// AutoAugment applies torchvision's AutoAugment with the given policy
// (normally CIFAR10Policy) to img in place, drawing from r as torchvision
// draws from torch's generator: a sub-policy, two uniform numbers for the
// two probabilities and two signs. scratch must have img's shape. It
// returns the sub-policy drawn and the operations applied.
func AutoAugment(img, scratch Image, policy []SubPolicy, r *rand.Rand) Applied {
	a := Applied{SubPolicy: r.IntN(len(policy))}
	sub := policy[a.SubPolicy]
	probs := [2]float32{r.Float32(), r.Float32()}
	signs := [2]int{r.IntN(2), r.IntN(2)}
	for i, p := range sub {
		if probs[i] > p.Prob {
			continue
		}
		m, signed := Magnitude(p.Op, p.Bin, img.W, img.H)
		if signed && signs[i] == 0 {
			m = -m
		}
		p.Op.Apply(scratch, img, m)
		copy(img.Pix, scratch.Pix)
		a.Ops |= 1 << p.Op
	}
	return a
}

// CropFlip is the usual CIFAR augmentation: pad the image with pad pixels
// of 0 on every side, take a random crop of the original size, and flip it
// horizontally with probability ½. It writes the result to dst.
func CropFlip(dst, src Image, pad int, r *rand.Rand) {
	dy, dx := r.IntN(2*pad+1)-pad, r.IntN(2*pad+1)-pad
	flip := r.IntN(2) == 1
	w := src.W
	// Output column x reads input column x+dx, or w−1−x+dx when flipped;
	// [lo, hi) are the columns where that lies inside the image.
	lo, hi := max(0, -dx), min(w, w-dx)
	if flip {
		lo, hi = max(0, dx), min(w, w+dx)
	}
	for c := range src.C {
		in, out := src.plane(c), dst.plane(c)
		for y := range src.H {
			row := out[y*w : (y+1)*w]
			sy := y + dy
			if sy < 0 || sy >= src.H || lo >= hi {
				clear(row)
				continue
			}
			srow := in[sy*w : (sy+1)*w]
			clear(row[:lo])
			clear(row[hi:])
			if !flip {
				copy(row[lo:hi], srow[lo+dx:hi+dx])
				continue
			}
			for x := lo; x < hi; x++ {
				row[x] = srow[w-1-x+dx]
			}
		}
	}
}

// Augment says how training images are augmented. The zero value leaves
// them unchanged (evaluation).
type Augment struct {
	// CropFlip applies a random crop with 4 pixels of zero padding and a
	// random horizontal flip first.
	CropFlip bool
	// AutoAugment then applies AutoAugment with the CIFAR-10 policy, as the
	// paper does.
	AutoAugment bool
}

// Apply augments im in place with randomness from r; tmp must have im's
// shape. It returns what AutoAugment did (SubPolicy NoSubPolicy without
// it).
func (a Augment) Apply(im, tmp Image, r *rand.Rand) Applied {
	if a.CropFlip {
		CropFlip(tmp, im, 4, r)
		copy(im.Pix, tmp.Pix)
	}
	if a.AutoAugment {
		return AutoAugment(im, tmp, CIFAR10Policy[:], r)
	}
	return Applied{SubPolicy: NoSubPolicy}
}
