package optim

import (
	"maps"
	"math/rand/v2"
	"runtime"
	"slices"
	"testing"

	"github.com/psclip/psclip/nn"
)

// counter counts the updates of every element.
type counter [][]int

func (c counter) update(i, lo, hi int) {
	for j := lo; j < hi; j++ {
		c[i][j]++
	}
}

func TestShardCoversEveryElementOnce(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	sizes := []int{7, shardSpan + 3, 1, 2*shardSpan - 5, shardSpan}
	var ps []*nn.Param
	for i, n := range sizes {
		ps = append(ps, nn.NewParam(string(rune('a'+i)), n))
	}
	for _, procs := range []int{1, 2, 3, 8} {
		runtime.GOMAXPROCS(procs)
		c := make(counter, len(ps))
		for i, n := range sizes {
			c[i] = make([]int, n)
		}
		shard(ps, c)
		for i := range c {
			if j := slices.IndexFunc(c[i], func(k int) bool { return k != 1 }); j >= 0 {
				t.Fatalf("GOMAXPROCS %d: element %d of parameter %d updated %d times", procs, j, i, c[i][j])
			}
		}
	}
}

// TestStepsIndependentOfGOMAXPROCS runs each optimizer on parameters large
// enough to be shared out and checks that weights and state are
// bit-identical for 1, 2 and 3 goroutines.
func TestStepsIndependentOfGOMAXPROCS(t *testing.T) {
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(0))
	mk := map[string]func([]*nn.Param) Optimizer{
		"SGD": func(ps []*nn.Param) Optimizer {
			o, _ := NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, WeightDecay: 1e-2})
			return o
		},
		"SGD Nesterov": func(ps []*nn.Param) Optimizer {
			o, _ := NewSGD(ps, SGDConfig{LR: 0.1, Momentum: 0.9, Nesterov: true})
			return o
		},
		"SGD plain": func(ps []*nn.Param) Optimizer {
			o, _ := NewSGD(ps, SGDConfig{LR: 0.1})
			return o
		},
		"AdamW": func(ps []*nn.Param) Optimizer {
			o, _ := NewAdamW(DecayGroups(ps, 0.1), AdamWConfig{LR: 1e-3})
			return o
		},
	}
	for name, newOpt := range mk {
		var want []float32
		for _, procs := range []int{1, 2, 3} {
			runtime.GOMAXPROCS(procs)
			rng := rand.New(rand.NewPCG(3, 4))
			ps := []*nn.Param{nn.NewParam("w", 3, shardSpan+11), nn.NewParam("b", 5)}
			for _, p := range ps {
				for j := range p.Value.Data {
					p.Value.Data[j] = float32(rng.NormFloat64())
				}
			}
			o := newOpt(ps)
			for range 3 {
				for _, p := range ps {
					for j := range p.Grad.Data {
						p.Grad.Data[j] = float32(rng.NormFloat64())
					}
				}
				o.Step()
			}
			var got []float32
			for _, p := range ps {
				got = append(got, p.Value.Data...)
			}
			st := o.State().Tensors
			for _, k := range slices.Sorted(maps.Keys(st)) {
				got = append(got, st[k].Data...)
			}
			if want == nil {
				want = got
				continue
			}
			if !slices.Equal(got, want) {
				t.Errorf("%s: GOMAXPROCS %d gives other weights or state than 1", name, procs)
			}
		}
	}
}
