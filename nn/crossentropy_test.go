package nn

import (
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/tensor"
)

// crossEntropy64 is the textbook definition in float64, without the max
// shift: the independent reference.
func crossEntropy64(x []float32, y int) float64 {
	var z float64
	for _, v := range x {
		z += math.Exp(float64(v))
	}
	return -math.Log(math.Exp(float64(x[y])) / z)
}

func TestCrossEntropy(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 1))
	for _, shape := range [][]int{{4, 5}, {3, 4, 6}} {
		x := randTensor(rng, shape...)
		b, c := shape[0], shape[len(shape)-1]
		rows := x.Rows()
		y := make([]int32, rows)
		for i := range y {
			y[i] = int32(rng.IntN(c))
		}
		losses, d, err := CrossEntropy(x, y)
		if err != nil {
			t.Fatal(err)
		}
		per := rows / b
		for i := range b {
			var want float64
			for r := i * per; r < (i+1)*per; r++ {
				want += crossEntropy64(x.Data[r*c:(r+1)*c], int(y[r])) / float64(per)
			}
			if math.Abs(float64(losses[i])-want) > 1e-6*math.Max(1, want) {
				t.Errorf("%v sample %d: loss %g, want %g", shape, i, losses[i], want)
			}
		}
		// Gradient of Σ loss_i by central differences in float64.
		for j := range x.Data {
			old := x.Data[j]
			eval := func(v float32) float64 {
				x.Data[j] = v
				l, _, _ := CrossEntropy(x, y)
				var s float64
				for _, v := range l {
					s += float64(v)
				}
				return s
			}
			h := float32(1e-2)
			num := (eval(old+h) - eval(old-h)) / float64(2*h)
			x.Data[j] = old
			if math.Abs(num-float64(d.Data[j])) > 2e-3 {
				t.Errorf("%v: d[%d] = %g, finite differences %g", shape, j, d.Data[j], num)
			}
		}
	}
}

func TestCrossEntropyStable(t *testing.T) {
	x := tensor.From([]float32{1000, 0, -1000, 88, 89, 90}, 2, 3)
	losses, d, err := CrossEntropy(x, []int32{1, 2})
	if err != nil {
		t.Fatal(err)
	}
	want := []float64{1000, math.Log(1 + math.Exp(-1) + math.Exp(-2))}
	for i, w := range want {
		if math.Abs(float64(losses[i])-w) > 1e-4*w {
			t.Errorf("loss %d = %g, want %g", i, losses[i], w)
		}
	}
	for _, v := range d.Data {
		if math.IsNaN(float64(v)) || math.IsInf(float64(v), 0) {
			t.Fatalf("non-finite gradient %v", d.Data)
		}
	}
}

func TestCrossEntropyBadTargets(t *testing.T) {
	x := tensor.New(2, 3)
	for _, tc := range []struct {
		name string
		y    []int32
	}{{"negative", []int32{0, -1}}, {"too large", []int32{3, 0}}, {"count", []int32{0}}} {
		if _, _, err := CrossEntropy(x, tc.y); err == nil {
			t.Errorf("%s: no error for targets %v", tc.name, tc.y)
		}
	}
	if _, _, err := CrossEntropy(tensor.New(6), make([]int32, 6)); err == nil {
		t.Error("no error for 1-D logits")
	}
}

// The per-sample mode through a classifier with cross-entropy, against the
// brute force: Linear → CrossEntropy on [B,C] and on sequences.
func TestCrossEntropyPerSample(t *testing.T) {
	rng := rand.New(rand.NewPCG(2, 2))
	for _, shape := range [][]int{{6, 5}, {3, 4, 5}} {
		l := NewLinear("head", 5, 7, true)
		randomize(rng, l, 1)
		x := randTensor(rng, shape...)
		y := make([]int32, x.Rows())
		for i := range y {
			y[i] = int32(rng.IntN(7))
		}
		checkPerSample(t, l, x, y, CrossEntropy, medianClip)
	}
}

// Nil logits are an error, not a panic (main dereferenced them).
func TestCrossEntropyNil(t *testing.T) {
	if _, _, err := CrossEntropy(nil, nil); err == nil {
		t.Error("CrossEntropy(nil, nil): no error")
	}
}
