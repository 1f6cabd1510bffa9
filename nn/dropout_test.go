package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

func TestDropoutGrad(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	// checkGrad replays the same mask on every forward pass.
	checkGrad(t, NewDropout(0.3), randTensor(rng, 4, 9), gradOpt{})
}

func TestDropoutStatistics(t *testing.T) {
	const n, p = 100000, 0.5
	d := NewDropout(p)
	x := tensor.New(1, n)
	for i := range x.Data {
		x.Data[i] = 1
	}
	y := d.Forward(&Context{Train: true, Rand: rand.New(rand.NewPCG(2, 2))}, x)
	var kept int
	for _, v := range y.Data {
		switch v {
		case 0:
		case 2: // 1/(1-p)
			kept++
		default:
			t.Fatalf("output %g, want 0 or 2", v)
		}
	}
	// Binomial(n, ½): 5 standard deviations is 790.
	if math.Abs(float64(kept)-n*(1-p)) > 800 {
		t.Errorf("kept %d of %d, want about %g", kept, n, n*(1-p))
	}
	if y := d.Forward(&Context{}, x); y != x {
		t.Error("dropout outside training is not the identity")
	}
}

// TestDropoutMask checks that an element is dropped exactly where
// Rand.Float64() < P, the rule the masks have always followed (so a seed
// keeps its masks), including probabilities near 0 and 1.
func TestDropoutMask(t *testing.T) {
	for _, p := range []float64{0.5, 0.3, 0.1, 1e-6, 0.999, 0x1p-53, 0.5 - 0x1p-54} {
		const n = 5000
		x := tensor.New(2, n/2)
		for i := range x.Data {
			x.Data[i] = float32(i%7) - 3
		}
		y := NewDropout(p).Forward(&Context{Train: true, Rand: rand.New(rand.NewPCG(5, 6))}, x)
		ref := rand.New(rand.NewPCG(5, 6))
		keep := float32(1 / (1 - p))
		for i, v := range x.Data {
			want := keep * v
			if ref.Float64() < p {
				want = 0 * v
			}
			if math.Float32bits(y.Data[i]) != math.Float32bits(want) {
				t.Fatalf("P = %g: element %d is %g, want %g", p, i, y.Data[i], want)
			}
		}
	}
}
