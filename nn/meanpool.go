package nn

import "github.com/psclip/psclip/tensor"

// MeanPool averages a sequence over its positions: [B,T,C] → [B,C], y[b,c]
// = (1/T) Σ_t x[b,t,c], the mean pooling that turns a sequence model's
// per-position features into one feature vector per sample (for a
// sequence classifier or regressor). It has no parameters, and each
// sample's output depends on that sample's positions only, so the
// per-sample mode needs nothing of it: Backward spreads dy[b] evenly over
// sample b's positions. The sums are formed in float64. The zero value is
// ready to use.
type MeanPool struct {
	shape []int
	y, dx *tensor.Tensor
}

// Forward returns the mean of x over its second dimension.
func (m *MeanPool) Forward(ctx *Context, x *tensor.Tensor) *tensor.Tensor {
	if _, err := m.OutShape(x.Shape); err != nil {
		panic(err.Error())
	}
	b, t, c := x.Shape[0], x.Shape[1], x.Shape[2]
	m.shape = append(m.shape[:0], x.Shape...)
	m.y = reuse(m.y, b, c)
	inv := 1 / float64(t)
	parallel(b, workers(b), func(_, lo, hi int) {
		sum := make([]float64, c)
		for i := lo; i < hi; i++ {
			clear(sum)
			for j := i * t * c; j < (i+1)*t*c; j += c {
				for k, v := range x.Data[j : j+c] {
					sum[k] += float64(v)
				}
			}
			for k, s := range sum {
				m.y.Data[i*c+k] = float32(s * inv)
			}
		}
	})
	return m.y
}

// Backward returns dx[b,t,c] = dy[b,c]/T.
func (m *MeanPool) Backward(ctx *Context, dy *tensor.Tensor) *tensor.Tensor {
	if m.y == nil || !dy.SameShape(m.y) {
		panic("nn: MeanPool: gradient " + dy.String() + " does not match the latest Forward")
	}
	b, t, c := m.shape[0], m.shape[1], m.shape[2]
	m.dx = reuse(m.dx, m.shape...)
	inv := 1 / float32(t)
	parallel(b, workers(b), func(_, lo, hi int) {
		for i := lo; i < hi; i++ {
			g := dy.Data[i*c : (i+1)*c]
			for j := i * t * c; j < (i+1)*t*c; j += c {
				row := m.dx.Data[j : j+c]
				for k, v := range g {
					row[k] = v * inv
				}
			}
		}
	})
	return m.dx
}

// Params returns nil: MeanPool has no parameters.
func (m *MeanPool) Params() []*Param { return nil }

// OutShape is [B,C] for [B,T,C].
func (m *MeanPool) OutShape(in []int) ([]int, error) {
	if len(in) != 3 {
		return nil, wrongInput("MeanPool", in, "[B,T,C]")
	}
	return []int{in[0], in[2]}, nil
}
