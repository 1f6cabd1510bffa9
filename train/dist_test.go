package train_test

import (
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"reflect"
	"slices"
	"sync"
	"testing"

	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// dropoutMLP is mlp with dropout between its layers, so that the dropout
// masks take part in every comparison.
func dropoutMLP(seed uint64) nn.Sequential {
	m := mlp(seed)
	return nn.Sequential{m[0], m[1], nn.NewDropout(0.25), m[2]}
}

// run is one rank's training: its final weights and every step's Stats
// (with their norms copied), or the first error.
type run struct {
	weights []float32
	stats   []train.Stats
	err     error
}

// trainRank trains a fresh dropoutMLP(seed) on communicator c (nil: one
// process) for the given steps, with SGD and momentum. A noisy estimator's
// (DP-SGD's) steps are PrivateStep's, on the step's micro-batches joined
// into one sample and cut again into micro-batches of the first one's size
// (the same micro-batches), with the expected batch 10.
func trainRank(c dist.Comm, e estimator.Estimator, scope train.Scope, loss train.Loss, steps [][]train.Batch) run {
	model := dropoutMLP(20)
	opt, err := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	if err != nil {
		return run{err: err}
	}
	noisy := estimator.NoisyOf(e) != nil
	cfg := train.Config{Model: model, Loss: loss, Estimator: e, Optimizer: opt, Scope: scope,
		Rand: rand.New(rand.NewPCG(3, 4)), KeepNorms: e.PerSample(), Comm: c}
	if noisy {
		cfg.ExpectedBatch, cfg.SampleStats = 10, true
	}
	tr, err := train.New(cfg)
	if err != nil {
		return run{err: err}
	}
	var r run
	for i, mbs := range steps {
		var st train.Stats
		if noisy {
			st, err = tr.PrivateStep(join(mbs), mbs[0].X.Shape[0])
		} else {
			st, err = tr.Step(mbs...)
		}
		if err != nil {
			return run{err: fmt.Errorf("step %d: %w", i, err)}
		}
		st.Norms = slices.Clone(st.Norms)
		r.stats = append(r.stats, st)
	}
	for _, p := range tr.Params() {
		r.weights = append(r.weights, p.Value.Data...)
	}
	return r
}

// join is the samples of micro-batches bs, of class targets, in one batch.
func join(bs []train.Batch) train.Batch {
	var all train.Batch
	for _, b := range bs {
		if all.X == nil {
			all.X = tensor.New(append([]int{0}, b.X.Shape[1:]...)...)
		}
		all.X.Data = append(all.X.Data, b.X.Data...)
		all.X.Shape[0] += b.X.Shape[0]
		all.Y = append(all.Y, b.Y...)
	}
	return all
}

// trainRanks trains on every rank of a Group of n, each rank in its own
// goroutine, and returns the ranks' runs.
func trainRanks(n int, mk func() estimator.Estimator, scope train.Scope, loss func(rank int) train.Loss, steps [][]train.Batch) []run {
	runs := make([]run, n)
	var wg sync.WaitGroup
	for _, c := range dist.Group(n) {
		wg.Go(func() { runs[c.Rank()] = trainRank(c, mk(), scope, loss(c.Rank()), steps) })
	}
	wg.Wait()
	return runs
}

func crossEntropy(int) train.Loss { return nn.CrossEntropy }

// distSteps returns 30 steps of k micro-batches of 4 samples. Step 4's
// micro-batch 3 holds a NaN sample (computed by a rank other than 0 for
// 2 and 3 ranks), and step 7 is NaN throughout.
func distSteps(k int) [][]train.Batch {
	rng := rand.New(rand.NewPCG(21, 21))
	steps := make([][]train.Batch, 30)
	for i := range steps {
		for j := range k {
			b := batch(rng, 4)
			switch {
			case i == 4 && j == 3:
				b.X.Data[5] = float32(math.NaN()) // sample 1
			case i == 7:
				for x := range b.X.Data {
					b.X.Data[x] = float32(math.NaN())
				}
			}
			steps[i] = append(steps[i], b)
		}
	}
	return steps
}

// bits is a float64's bits, so that NaNs compare equal.
func bits(xs []float64) []uint64 {
	out := make([]uint64, len(xs))
	for i, x := range xs {
		out[i] = math.Float64bits(x)
	}
	return out
}

// sameStats reports whether two steps' Stats are equal bit for bit, the
// Global scope's GradNorm and the group norms (norms of a sum over ranks)
// left out unless all is set.
func sameStats(a, b train.Stats, all bool) bool {
	if !all {
		a.GradNorm, b.GradNorm = 0, 0
	}
	same := slices.Equal(bits(a.Norms), bits(b.Norms)) &&
		slices.Equal(bits([]float64{a.Loss, a.GradNorm}), bits([]float64{b.Loss, b.GradNorm}))
	a.Norms, a.Loss, a.GradNorm = nil, 0, 0
	b.Norms, b.Loss, b.GradNorm = nil, 0, 0
	return same && reflect.DeepEqual(a, b)
}

// N ranks compute what one process computes: for every estimator and scope,
// with dropout, a NaN sample on one rank and a step with nothing finite,
// on 1, 2, 3 and 5 ranks of 5 micro-batches (not a multiple of 2 or 3).
// The ranks end with the same bits,
// as do two runs of n ranks; the weights after 30 steps are one process's up
// to float32 summation order (relative 1e-5); the first step's counts,
// losses and norms are one process's exactly, and every step's counts
// agree with one process's.
func TestRanksMatchOneProcess(t *testing.T) {
	const k = 5
	steps := distSteps(k)
	for name, mk := range estimators(t) {
		for _, scope := range scopes(mk()) {
			one := trainRank(nil, mk(), scope, nn.CrossEntropy, steps)
			if one.err != nil {
				t.Fatalf("%s, %v: %v", name, scope, one.err)
			}
			if st := one.stats[7]; !st.Skipped {
				t.Fatalf("%s, %v: step 7 was not skipped: %+v", name, scope, st)
			}
			if st := one.stats[4]; st.Dropped+st.SkippedBatches != 1 {
				t.Fatalf("%s, %v: step 4 left out nothing: %+v", name, scope, st)
			}
			want := make([]float64, len(one.weights))
			for i, w := range one.weights {
				want[i] = float64(w)
			}
			for _, n := range []int{1, 2, 3, 5} {
				runs := trainRanks(n, mk, scope, crossEntropy, steps)
				again := trainRanks(n, mk, scope, crossEntropy, steps)
				for r := range runs {
					if runs[r].err != nil || again[r].err != nil {
						t.Fatalf("%s, %v, %d ranks: rank %d: %v, %v", name, scope, n, r, runs[r].err, again[r].err)
					}
					if !slices.Equal(runs[r].weights, runs[0].weights) || !slices.Equal(again[r].weights, runs[0].weights) {
						t.Fatalf("%s, %v, %d ranks: rank %d's weights differ from rank 0's or another run's", name, scope, n, r)
					}
					for i := range steps {
						if !sameStats(runs[r].stats[i], runs[0].stats[i], true) || !sameStats(again[r].stats[i], runs[0].stats[i], true) {
							t.Fatalf("%s, %v, %d ranks: step %d: rank %d's stats %+v, rank 0's %+v", name, scope, n, i, r, runs[r].stats[i], runs[0].stats[i])
						}
					}
				}
				got := runs[0]
				if n == 1 && !slices.Equal(got.weights, one.weights) {
					t.Errorf("%s, %v: one rank of a Group differs from one process", name, scope)
				}
				if !sameStats(got.stats[0], one.stats[0], scope != train.Global) {
					t.Errorf("%s, %v, %d ranks: first step's stats %+v, one process %+v", name, scope, n, got.stats[0], one.stats[0])
				}
				for i := range steps {
					a, b := got.stats[i], one.stats[i]
					if a.Skipped != b.Skipped || a.SkippedBatches != b.SkippedBatches || a.Dropped != b.Dropped || a.Samples != b.Samples {
						t.Errorf("%s, %v, %d ranks: step %d's stats %+v, one process %+v", name, scope, n, i, a, b)
					}
				}
				have := make([]float64, len(got.weights))
				for i, w := range got.weights {
					have[i] = float64(w)
				}
				t.Run(fmt.Sprintf("%s/%v/%d ranks", name, scope, n), func(t *testing.T) { assertClose(t, have, want, 1e-5) })
			}
		}
	}
}

// DP-SGD on N ranks adds the noise of one process, once: rank 0 draws it
// into its share of the step's sum before the ranks' shares are added
// (with private adaptive clipping every rank draws the clipped count's
// noise, the same bits). A sample in one micro-batch is then one process's
// step bit for bit on any number of ranks (the rank that computes the
// micro-batch adds its gradient to rank 0's noise, every other rank adds
// zeros); a sample in 5 micro-batches, shared by the ranks, trains one
// process's weights up to float32 summation order. Noise added on every
// rank, or by none, moves the weights by 0.5 in 30 steps.
func TestPrivateRanksMatchOneProcess(t *testing.T) {
	for name, spec := range map[string]estimator.Spec{
		"dp-sgd":          {Estimator: "dp-sgd", Clip: 0.5, NoiseMultiplier: 1, NoiseSeed: 7},
		"dp-sgd adaptive": {Estimator: "dp-sgd", Clip: 0.5, NoiseMultiplier: 1, NoiseSeed: 7, TargetQuantile: 0.5, CountNoise: 2},
	} {
		mk := func() estimator.Estimator {
			e, err := spec.NewPrivate(10)
			if err != nil {
				t.Fatal(err)
			}
			return e
		}
		for _, k := range []int{1, 5} {
			steps := distSteps(k)
			one := trainRank(nil, mk(), train.Global, nn.CrossEntropy, steps)
			if one.err != nil {
				t.Fatalf("%s, %d micro-batches: %v", name, k, one.err)
			}
			want := flatten([][]float32{one.weights})
			for _, n := range []int{2, 3} {
				runs := trainRanks(n, mk, train.Global, crossEntropy, steps)
				for r := range runs {
					if runs[r].err != nil {
						t.Fatalf("%s, %d micro-batches, %d ranks: rank %d: %v", name, k, n, r, runs[r].err)
					}
					if !slices.Equal(runs[r].weights, runs[0].weights) {
						t.Fatalf("%s, %d micro-batches, %d ranks: rank %d's weights differ from rank 0's", name, k, n, r)
					}
				}
				if k == 1 && !slices.Equal(runs[0].weights, one.weights) {
					t.Errorf("%s, one micro-batch, %d ranks: the weights differ from one process's", name, n)
				}
				t.Run(fmt.Sprintf("%s/%d micro-batches/%d ranks", name, k, n), func(t *testing.T) {
					assertClose(t, flatten([][]float32{runs[0].weights}), want, 1e-5)
				})
			}
		}
	}
}

// A loss that fails on one rank fails the step on every rank with the same
// message, and on that rank with its *BatchError; no rank's weights change,
// and the next step runs.
func TestRankLossFails(t *testing.T) {
	const k, ranks = 5, 3
	steps := distSteps(k)[:3]
	for _, scope := range []train.Scope{train.Global, train.MicroBatch} {
		loss := func(rank int) train.Loss {
			calls := 0
			return func(out *tensor.Tensor, y []int32) ([]float32, *tensor.Tensor, error) {
				calls++
				if rank == 1 && calls == 4 { // step 1's micro-batch 2, rank 1's second ([1,3) of 5)
					return nil, nil, errors.New("the loss failed")
				}
				return nn.CrossEntropy(out, y)
			}
		}
		clip, _ := estimator.NewClipSGD(0.5)
		var (
			wg      sync.WaitGroup
			errs    = make([]error, ranks)
			changed = make([]bool, ranks)
			weights = make([][]float32, ranks)
		)
		for _, c := range dist.Group(ranks) {
			wg.Go(func() {
				r := c.Rank()
				model := mlp(20)
				opt, _ := optim.NewSGD(model.Params(), optim.SGDConfig{LR: 0.1})
				tr, err := train.New(train.Config{Model: model, Loss: loss(r), Estimator: clip, Optimizer: opt, Scope: scope, Comm: c})
				if err != nil {
					errs[r] = err
					return
				}
				if _, err := tr.Step(steps[0]...); err != nil {
					errs[r] = err
					return
				}
				before := snapshot(model.Params(), opt)
				_, errs[r] = tr.Step(steps[1]...)
				changed[r] = !slices.Equal(snapshot(model.Params(), opt), before)
				if _, err := tr.Step(steps[2]...); err != nil {
					errs[r] = err
				}
				for _, p := range tr.Params() {
					weights[r] = append(weights[r], p.Value.Data...)
				}
			})
		}
		wg.Wait()
		for r, err := range errs {
			var re *dist.RankError
			if !errors.As(err, &re) || err.Error() != errs[0].Error() || changed[r] {
				t.Errorf("%v: rank %d: error %v (rank 0's %v), weights changed %v: want the same *dist.RankError, no change", scope, r, err, errs[0], changed[r])
			}
			var be *train.BatchError
			if errors.As(err, &be) != (r == 1) || (r == 1 && be.Batch != 2) {
				t.Errorf("%v: rank %d: error %v: want a *train.BatchError for micro-batch 2 on rank 1 alone", scope, r, err)
			}
			if !slices.Equal(weights[r], weights[0]) {
				t.Errorf("%v: rank %d's weights differ from rank 0's after the next step", scope, r)
			}
		}
		if want := "rank 1: train: micro-batch 2: the loss failed"; errs[0] == nil || errs[0].Error() != want {
			t.Errorf("%v: error %v, want %q", scope, errs[0], want)
		}
	}
}

// scopes lists the scopes that have an effect with e: all three for an
// estimator with a batch-level Scale, Global for a per-sample one and SGD
// (New refuses the others).
func scopes(e estimator.Estimator) []train.Scope {
	if _, sgd := e.(estimator.SGD); sgd || e.PerSample() {
		return []train.Scope{train.Global}
	}
	return []train.Scope{train.Global, train.MicroBatch, train.MicroBatchMean}
}

// Fewer micro-batches than ranks would leave ranks idle: every rank
// refuses the step alike with a *RanksError before anything runs (main
// trained on with two of 7 ranks idle, without a word).
func TestFewerBatchesThanRanks(t *testing.T) {
	steps := distSteps(5)[:1]
	for _, n := range []int{6, 7} {
		runs := trainRanks(n, func() estimator.Estimator { return estimator.SGD{} }, train.Global, crossEntropy, steps)
		for r, run := range runs {
			var re *train.RanksError
			if !errors.As(run.err, &re) || re.Batches != 5 || re.Ranks != n {
				t.Errorf("%d ranks: rank %d: %v, want a *train.RanksError for 5 micro-batches", n, r, run.err)
			}
		}
	}
}
