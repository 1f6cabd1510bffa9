package train

import (
	"errors"
	"math"
	"math/rand/v2"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// TestPerSampleNorms checks the per-sample norms against an independent
// computation: each sample alone, through an ordinary backward pass of its
// own loss, whose gradient's norm it must be.
func TestPerSampleNorms(t *testing.T) {
	rng := rand.New(rand.NewPCG(1, 2))
	model := nn.Sequential{nn.NewLinear("a", 5, 7, true), &nn.ReLU{}, nn.NewLinear("b", 7, 3, true)}
	for _, p := range model.Params() {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(rng.NormFloat64())
		}
	}
	const n = 4
	x := tensor.New(n, 5)
	for i := range x.Data {
		x.Data[i] = float32(rng.NormFloat64())
	}
	y := []int32{0, 2, 1, 2}
	losses, norms, err := PerSampleNorms(model, nn.CrossEntropy, x, y)
	if err != nil {
		t.Fatal(err)
	}
	for i := range n {
		for _, p := range model.Params() {
			p.Grad.Zero()
		}
		xi := &tensor.Tensor{Shape: []int{1, 5}, Data: x.Data[i*5 : (i+1)*5]}
		ctx := &nn.Context{}
		l, d, err := nn.CrossEntropy(model.Forward(ctx, xi), y[i:i+1])
		if err != nil {
			t.Fatal(err)
		}
		model.Backward(ctx, d)
		var sq float64
		for _, p := range model.Params() {
			for _, g := range p.Grad.Data {
				sq += float64(g) * float64(g)
			}
		}
		if want := math.Sqrt(sq); math.Abs(norms[i]-want) > 1e-5*want || losses[i] != l[0] {
			t.Errorf("sample %d: norm %v loss %v; alone: %v %v", i, norms[i], losses[i], want, l[0])
		}
	}
}

func TestSplit(t *testing.T) {
	x := tensor.New(6, 2)
	for i := range x.Data {
		x.Data[i] = float32(i)
	}
	y := []int32{0, 1, 2, 3, 4, 5}
	bs, err := Split(Batch{X: x, Y: y}, 3)
	if err != nil || len(bs) != 3 {
		t.Fatalf("%d micro-batches, want 3", len(bs))
	}
	for j, b := range bs {
		if b.X.Dim(0) != 2 || b.X.Data[0] != float32(4*j) || b.Y[1] != int32(2*j+1) {
			t.Errorf("micro-batch %d: %v %v", j, b.X, b.Y)
		}
	}
	// Uneven: 6 samples in 4 micro-batches of 1, 2, 1 and 2; 8 in 6.
	for _, tc := range []struct {
		k     int
		sizes []int
	}{{4, []int{1, 2, 1, 2}}, {8, []int{1, 1, 1, 1, 1, 1}}} {
		next := 0
		bs, err := Split(Batch{X: x, Y: y}, tc.k)
		if err != nil {
			t.Fatal(err)
		}
		for j, b := range bs {
			if b.X.Dim(0) != tc.sizes[j] || b.Y[0] != int32(next) || b.X.Data[0] != float32(2*next) {
				t.Errorf("k %d: micro-batch %d: %v %v, want %d samples from %d", tc.k, j, b.X, b.Y, tc.sizes[j], next)
			}
			next += b.X.Dim(0)
		}
	}
}

// Split refuses what it cannot cut with a *setting.Error naming the
// argument; on main these panicked (k = -1: a negative slice length; a nil
// batch: a nil dereference).
func TestSplitRefuses(t *testing.T) {
	x := tensor.New(6, 2)
	tests := []struct {
		x     *tensor.Tensor
		y     []int32
		k     int
		field string
	}{
		{x, make([]int32, 6), -1, "k"},
		{x, make([]int32, 6), 0, "k"},
		{nil, nil, 2, "X"},
		{tensor.New(0, 2), nil, 2, "X"},
		{&tensor.Tensor{Shape: []int{6, 2}, Data: make([]float32, 5)}, make([]int32, 6), 2, "X"},
		{x, make([]int32, 7), 2, "Y"},
	}
	for _, tt := range tests {
		bs, err := Split(Batch{X: tt.x, Y: tt.y}, tt.k)
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != tt.field || bs != nil {
			t.Errorf("Split(%v, %d targets, %d) = %d batches, %v; want a *setting.Error for %s", tt.x, len(tt.y), tt.k, len(bs), err, tt.field)
		}
	}
}
