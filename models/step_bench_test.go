package models

import (
	"slices"
	"testing"
	"time"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/tensor"
)

// benchStep times forward, loss and backward of the batch (x, y) through m,
// plain and with per-sample norms and the clipped gradient (Finish),
// interleaved so that both see the same machine load; it reports the median
// of each, their ratio, and the per-sample step's throughput in items (unit)
// per second.
func benchStep(b *testing.B, m nn.Layer, x *tensor.Tensor, y []int32, unit string, items int) {
	batch := x.Dim(0)
	c := make([]float32, batch)
	for i := range c {
		c[i] = 1 / float32(batch)
	}
	var ctx nn.Context
	step := func(perSample bool) time.Duration {
		start := time.Now()
		if perSample {
			ctx.BeginPerSample(batch) // before Forward, as train.Trainer does
		}
		_, dy, err := nn.CrossEntropy(m.Forward(&ctx, x), y)
		if err != nil {
			b.Fatal(err)
		}
		if perSample {
			m.Backward(&ctx, dy)
			ctx.Finish(c)
			ctx.EndPerSample()
		} else {
			m.Backward(&ctx, dy)
		}
		return time.Since(start)
	}
	var plain, ps []float64
	for b.Loop() {
		plain = append(plain, step(false).Seconds())
		ps = append(ps, step(true).Seconds())
	}
	mp, ms := median(plain), median(ps)
	b.ReportMetric(mp*1e3, "plain-ms")
	b.ReportMetric(ms*1e3, "per-sample-ms")
	b.ReportMetric(ms/mp, "ratio")
	b.ReportMetric(float64(items)/ms, "per-sample-"+unit+"/s")
}

func median(x []float64) float64 {
	s := slices.Clone(x)
	slices.Sort(s)
	return s[len(s)/2]
}
