package cifar

import (
	"bytes"
	"math"
	"math/rand/v2"
	"testing"
)

func TestCIFAR10PolicyIsWellFormed(t *testing.T) {
	for i, sub := range CIFAR10Policy {
		for _, p := range sub {
			if p.Op >= numOps || p.Prob < 0 || p.Prob > 1 || p.Bin < 0 || p.Bin >= NumBins {
				t.Errorf("sub-policy %d: bad step %+v", i, p)
			}
		}
	}
	// Spot checks against torchvision's table.
	if got := CIFAR10Policy[22]; got != (SubPolicy{{AutoContrast, 0.9, 0}, {Solarize, 0.8, 3}}) {
		t.Errorf("sub-policy 22 = %+v", got)
	}
	if got := CIFAR10Policy[1]; got != (SubPolicy{{Rotate, 0.7, 2}, {TranslateX, 0.3, 9}}) {
		t.Errorf("sub-policy 1 = %+v", got)
	}
}

func TestAutoAugmentAppliesPolicy(t *testing.T) {
	src := randomImage(3, Side, Side, 5)
	scratch := NewImage(3, Side, Side)
	r := rand.New(rand.NewPCG(1, 2))
	for range 20 {
		// Always applied: invert twice is the identity.
		img := Image{3, Side, Side, bytes.Clone(src.Pix)}
		AutoAugment(img, scratch, []SubPolicy{{{Invert, 1, 0}, {Invert, 1, 0}}}, r)
		if !bytes.Equal(img.Pix, src.Pix) {
			t.Fatal("Invert∘Invert changed the image")
		}
		// Applied once, with probability 1, and never with probability 0
		// (barring a uniform draw of exactly 0).
		img = Image{3, Side, Side, bytes.Clone(src.Pix)}
		AutoAugment(img, scratch, []SubPolicy{{{Invert, 1, 0}, {Equalize, 0, 0}}}, r)
		if want := apply(Invert, src, 0); !bytes.Equal(img.Pix, want.Pix) {
			t.Fatal("Invert with probability 1 then Equalize with probability 0 is not Invert")
		}
	}
	// Signed ops take both signs: TranslateX at bin 9 moves a marker 14
	// pixels left or right.
	seen := map[int]bool{}
	for range 50 {
		img := marker(3, Side, Side, 16, 5, 99)
		AutoAugment(img, scratch, []SubPolicy{{{TranslateX, 1, 9}, {TranslateX, 0, 0}}}, r)
		for x := range Side {
			if img.Pix[5*Side+x] == 99 {
				seen[x] = true
			}
		}
	}
	if len(seen) != 2 || !seen[2] || !seen[30] {
		t.Errorf("TranslateX(±14.5) put the marker at columns %v, want 2 and 30", seen)
	}
}

// TestAutoAugmentReportsWhatItApplied replays every image's report: the
// reported sub-policy's reported operations, with the magnitudes of the
// signs drawn, give the augmented image; over many images every
// sub-policy is drawn and each op runs about as often as its probability
// says.
func TestAutoAugmentReportsWhatItApplied(t *testing.T) {
	src := randomImage(1, Side, Side, 9)
	scratch := NewImage(1, Side, Side)
	source := rand.NewPCG(3, 4)
	r := rand.New(source)
	const n = 5000
	var drawn [len(CIFAR10Policy)]int
	var ran [len(CIFAR10Policy)][2]int
	for range n {
		img := Image{1, Side, Side, bytes.Clone(src.Pix)}
		// The draws AutoAugment makes, replayed from a copy of r.
		pcg := *source
		replay := rand.New(&pcg)
		sub := replay.IntN(len(CIFAR10Policy))
		probs := [2]float32{replay.Float32(), replay.Float32()}
		signs := [2]int{replay.IntN(2), replay.IntN(2)}
		a := AutoAugment(img, scratch, CIFAR10Policy[:], r)
		if a.SubPolicy != sub {
			t.Fatalf("reported sub-policy %d, drew %d", a.SubPolicy, sub)
		}
		drawn[sub]++
		want := Image{1, Side, Side, bytes.Clone(src.Pix)}
		var ops OpSet
		for i, p := range CIFAR10Policy[sub] {
			if probs[i] > p.Prob {
				continue
			}
			ran[sub][i]++
			m, signed := Magnitude(p.Op, p.Bin, Side, Side)
			if signed && signs[i] == 0 {
				m = -m
			}
			want = apply(p.Op, want, m)
			ops |= 1 << p.Op
		}
		if a.Ops != ops || !bytes.Equal(img.Pix, want.Pix) {
			t.Fatalf("sub-policy %d: reported ops %b, ran %b (image equal: %v)", sub, a.Ops, ops, bytes.Equal(img.Pix, want.Pix))
		}
	}
	for i, sub := range CIFAR10Policy {
		if drawn[i] < n/len(CIFAR10Policy)/2 {
			t.Errorf("sub-policy %d drawn %d times in %d", i, drawn[i], n)
		}
		for j, p := range sub {
			// Within 5 binomial standard deviations of its probability.
			mean := float64(drawn[i]) * float64(p.Prob)
			if sd := math.Sqrt(mean * (1 - float64(p.Prob))); math.Abs(float64(ran[i][j])-mean) > 5*sd+1 {
				t.Errorf("sub-policy %d op %d (%v, p = %v) ran %d times in %d", i, j, p.Op, p.Prob, ran[i][j], drawn[i])
			}
		}
	}
	if (Augment{CropFlip: true}).Apply(src, scratch, r) != (Applied{SubPolicy: NoSubPolicy}) {
		t.Error("crop and flip reported an AutoAugment sub-policy")
	}
}

func TestAutoAugmentIsDeterministic(t *testing.T) {
	src := randomImage(3, Side, Side, 6)
	run := func() [][]byte {
		r := rand.New(rand.NewPCG(7, 8))
		var out [][]byte
		scratch := make([]byte, ImageBytes)
		for range 200 {
			img := bytes.Clone(src.Pix)
			Augment{CropFlip: true, AutoAugment: true}.Apply(CIFARImage(img), CIFARImage(scratch), r)
			out = append(out, img)
		}
		return out
	}
	a, b := run(), run()
	changed := 0
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			t.Fatalf("image %d differs between two runs with the same seed", i)
		}
		if !bytes.Equal(a[i], src.Pix) {
			changed++
		}
	}
	if changed < 150 {
		t.Errorf("only %d of 200 augmented images differ from the original", changed)
	}
}

// TestCropFlip checks every output against all 9×9×2 crops and flips by
// brute force, and that the extreme offsets and both flips occur.
func TestCropFlip(t *testing.T) {
	src := randomImage(3, 8, 8, 9)
	r := rand.New(rand.NewPCG(3, 4))
	seen := map[[3]int]bool{}
	dst := NewImage(3, 8, 8)
	for range 2000 {
		CropFlip(dst, src, 4, r)
		found := false
		for dy := -4; dy <= 4 && !found; dy++ {
			for dx := -4; dx <= 4 && !found; dx++ {
				for flip := range 2 {
					if bytes.Equal(dst.Pix, shiftFlip(src, dx, dy, flip == 1).Pix) {
						seen[[3]int{dx, dy, flip}] = true
						found = true
						break
					}
				}
			}
		}
		if !found {
			t.Fatalf("CropFlip output is no padded crop of the input")
		}
	}
	for _, k := range [][3]int{{-4, -4, 0}, {4, 4, 1}, {0, 0, 0}, {0, 0, 1}} {
		if !seen[k] {
			t.Errorf("offset/flip %v never drawn in 2000 tries", k)
		}
	}
}

// shiftFlip is the reference: out(x, y) = in(x' + dx, y + dy), x' = x or
// its mirror, 0 outside.
func shiftFlip(src Image, dx, dy int, flip bool) Image {
	out := NewImage(src.C, src.H, src.W)
	for c := range src.C {
		for y := range src.H {
			for x := range src.W {
				xs := x
				if flip {
					xs = src.W - 1 - x
				}
				xs, ys := xs+dx, y+dy
				if xs >= 0 && xs < src.W && ys >= 0 && ys < src.H {
					out.Pix[(c*src.H+y)*src.W+x] = src.Pix[(c*src.H+ys)*src.W+xs]
				}
			}
		}
	}
	return out
}
