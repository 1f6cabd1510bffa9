// Package estimator turns a batch of per-sample stochastic gradients into an
// update direction: plain SGD (the mean), Clip-SGD (the mean clipped to norm
// γ), normalized SGD (the mean over its norm) and PS-Clip-SGD (every sample
// clipped before averaging, with a constant or increasing threshold).
//
// Every estimator has the same two-stage form
//
//	d = Scale(|s|) · s,   s = Σ_i w_i g_i,
//
// where the weights w_i depend only on the per-sample gradient norms |g_i|.
// This is what lets the neural-network code clip per sample without ever
// materialising g_i: it computes the norms in the backward pass, asks for the
// weights, and forms s directly.
//
// The estimators are SGD, ClipSGD, NSGD and PSClip (with a Threshold from
// Constant, Increasing or HighProbability); a Spec names one with its
// settings, checks them and builds it (Spec.New). Direction (or a Workspace, in loops) applies an
// estimator to explicit per-sample gradients.
//
// Non-finite samples: a sample whose gradient norm is NaN or ±Inf gets
// weight 0 and is counted in Stats.Dropped; the remaining samples are
// averaged among themselves (PS-Clip-SGD's k still counts batch positions).
// If no sample is finite the direction is zero. NSGD maps a zero mean to the
// zero direction, not NaN.
//
// Benchmarks (Workspace.Direction, n = 64 samples; go test -bench Direction
// ./estimator). Measured on the shared 2-vCPU CI box at load average 4–13,
// so the wall times swing by up to 4× between repeats; best of several runs:
//
//	estimator                 d = 10   d = 1000
//	sgd                       6.1 µs   420 µs
//	clip-sgd                  6.0 µs   111 µs
//	nsgd                      6.1 µs   109 µs
//	ps-clip-sgd γ=1           6.3 µs   113 µs
//	ps-clip-sgd 1·k^(1/1.5)   6.1 µs   117 µs
//
// A CPU profile of the d = 10 case puts it at about 2 µs of CPU per call
// (3 ns per gradient value); sgd's d = 1000 figure is load noise (it runs the
// same code as nsgd, and repeats ranged 420–1270 µs).
// All variants cost the same: one pass for the norms and one for the
// weighted sum; the increasing threshold's k^(1/β) table is cached, so no
// math.Pow is paid per batch.
package estimator

// Estimator is a gradient estimator in the two-stage form of the package
// documentation.
type Estimator interface {
	// Name is the estimator's name, e.g. "ps-clip-sgd" (see Names; PSClip
	// with an increasing threshold is "inc-ps-clip-sgd").
	Name() string
	// PerSample reports whether Weights depends on the per-sample norms.
	// When it does not, callers may skip computing them and weight every
	// finite sample equally.
	PerSample() bool
	// Weights sets w[i], the weight of sample i (k = i+1 in batch order),
	// from its gradient norm norms[i]. A non-finite norm gets weight 0 and
	// is counted in Stats.Dropped; the average is then over the finite
	// samples. Weights is called once per batch, so an adaptive estimator
	// may update its state here.
	Weights(norms []float64, w []float64) Stats
	// Scale is the factor applied to the weighted sum s, given |s|.
	Scale(norm float64) float64
}

// Stats describes what an estimator did to one batch.
type Stats struct {
	N            int     // samples in the batch
	Clipped      int     // samples whose weight was reduced by per-sample clipping
	Dropped      int     // samples left out because their norm was NaN or ±Inf
	MeanNorm     float64 // mean per-sample gradient norm over the finite samples (0 if unknown)
	PreClipNorm  float64 // |s|, the norm of the weighted sum before Scale
	BatchClipped bool    // Scale(|s|) < 1: the whole batch was clipped (Clip-SGD)
}
