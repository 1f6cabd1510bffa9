package dist_test

import (
	"fmt"
	"math"
	"slices"
	"sync"

	"github.com/psclip/psclip/dist"
)

// A data-parallel step with MB-Clip, as train.Trainer will take it (see
// README.md): every rank sees the step's K micro-batches, computes and
// clips its share of them, and one AllReduce sums the clipped gradients
// together with the step's scalars. Here the model is least squares
// y ≈ w·x, and the ranks are goroutines of a Group.
func Example_dataParallel() {
	const (
		k, m, d      = 4, 2, 3  // micro-batches per step, samples each, weights
		gamma, lr    = 0.3, 0.1 // MB-Clip's threshold on each share g_j/K; learning rate
		steps, ranks = 10, 2
		samples      = k * m * steps
	)
	// The data set: sample i is (x_i, y_i); step t's micro-batch j holds
	// samples (t·K+j)·M to (t·K+j+1)·M − 1.
	x := make([][d]float32, samples)
	y := make([]float32, samples)
	for i := range x {
		for c := range d {
			x[i][c] = float32(math.Sin(float64(i*d + c)))
		}
		y[i] = x[i][0] - 2*x[i][1] + float32(i%5)
	}
	// train runs the steps on one rank of c and returns its weights and
	// the number of clipped micro-batches.
	train := func(c dist.Comm) ([]float32, int) {
		w := make([]float32, d)
		clipped := 0
		for t := range steps {
			grad := make([]float32, d)
			scalars := []float64{0} // clipped micro-batches
			lo, hi := dist.Share(k, c.Rank(), c.Size())
			for j := lo; j < hi; j++ {
				g := make([]float32, d) // micro-batch j's share g_j/K
				for i := (t*k + j) * m; i < (t*k+j+1)*m; i++ {
					r := -y[i]
					for c := range d {
						r += w[c] * x[i][c]
					}
					for c := range d {
						g[c] += r * x[i][c] / (m * k)
					}
				}
				var sq float64
				for _, v := range g {
					sq += float64(v) * float64(v)
				}
				s := float32(1)
				if n := math.Sqrt(sq); n > gamma {
					s = float32(gamma / n)
					scalars[0]++
				}
				for c := range d {
					grad[c] += s * g[c]
				}
			}
			c.AllReduce(dist.Bufs{F32: [][]float32{grad}, F64: [][]float64{scalars}})
			for c := range d {
				w[c] -= lr * grad[c]
			}
			clipped += int(scalars[0])
		}
		return w, clipped
	}

	one, oneClipped := train(dist.Local{})
	weights := make([][]float32, ranks)
	clipped := make([]int, ranks)
	var wg sync.WaitGroup
	for _, c := range dist.Group(ranks) {
		wg.Go(func() { weights[c.Rank()], clipped[c.Rank()] = train(c) })
	}
	wg.Wait()

	var diff, size float64
	for c := range d {
		diff = max(diff, math.Abs(float64(weights[0][c]-one[c])))
		size = max(size, math.Abs(float64(one[c])))
	}
	fmt.Println("ranks agree bit for bit:", slices.Equal(weights[0], weights[1]) && clipped[0] == clipped[1])
	fmt.Printf("clipped micro-batches: %d of %d, one process: %d\n", clipped[0], k*steps, oneClipped)
	// One process adds the four shares in order, the ranks two and two.
	fmt.Println("weights within 1e-6 of one process:", diff <= 1e-6*size)
	// Output:
	// ranks agree bit for bit: true
	// clipped micro-batches: 20 of 40, one process: 20
	// weights within 1e-6 of one process: true
}
