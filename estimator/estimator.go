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
// The estimators are SGD, ClipSGD, NSGD, PSClip (with a Threshold from
// Constant, Increasing or HighProbability) and DPSGD, differentially
// private SGD: PS-Clip-SGD's factors with a constant threshold C, Gaussian
// noise of standard deviation σC added once per step to the sum of the
// clipped gradients (a Gaussian source, secure by default), and the sum
// divided by the expected batch size rather than the realised one (the
// Noisy interface, which package train honours); a Spec names one with its
// settings, checks them and builds it (Spec.New). Direction (or a Workspace, in loops) applies an
// estimator to explicit per-sample gradients and returns the norms and clip
// factors it computed.
//
// The weights are w_i = c_i/m: a plain clip factor c_i ∈ [0, 1] per sample
// (Estimator.Factors; 1 for the estimators that do not clip per sample)
// over the number m of finite samples. Factors and the direction functions
// take float32 or float64 gradients, so gradients from any framework can be
// clipped here.
//
// Non-finite samples: a sample whose gradient norm is NaN or ±Inf gets
// factor 0 and is counted in Stats.Dropped; the remaining samples are
// averaged among themselves (PS-Clip-SGD's k still counts batch positions).
// If no sample is finite the direction is zero. NSGD maps a zero mean to the
// zero direction, not NaN.
//
// The norms, weights and directions are the same to the bit on every
// architecture: every product is rounded before it is added (a conversion
// float64(x*y), which Go's compiler may not fuse into a multiply-add as it
// may x*y + z, and does on arm64), and the exponentials, logarithms and
// powers come from internal/detmath, not from package math, whose last bits
// differ between amd64 and arm64. CI runs the tests on arm64 under QEMU.
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
// Pow is called per batch.
package estimator

// Estimator is a gradient estimator in the two-stage form of the package
// documentation. A step's per-sample part is split into Factors, which
// clips and may be called on the step's samples in parts (micro-batches),
// and Update, which ends the step; Weights combines them for one batch.
type Estimator interface {
	// Name is the estimator's name, e.g. "ps-clip-sgd" (see Names; PSClip
	// with an increasing threshold is "inc-ps-clip-sgd").
	Name() string
	// PerSample reports whether the factors depend on the per-sample
	// norms. When they do not, every finite sample has factor 1, and
	// callers may skip computing the norms (package train then never calls
	// Factors or Update, and reports no per-sample norms).
	PerSample() bool
	// Factors sets c[i], the plain clip factor of sample k = k0+i+1 of the
	// step (k counts the step's samples in order, over all its parts), from
	// its gradient norm norms[i]: 1 for a sample kept whole, min(1, τ_k/|g_k|)
	// for PS-Clip-SGD, and 0 for a non-finite norm, which drops the sample
	// (counted in Stats.Dropped). It does not change the estimator's state,
	// so a step's samples may be given in consecutive parts, each with k0
	// the number of samples before it, and get the factors one call over
	// all of them would give (except where a warm-up threshold is the
	// median of the norms given: PSAuto, Quantile).
	Factors(k0 int, norms, c []float64) Stats
	// Update ends a step: an adaptive estimator learns from all of the
	// step's norms, in order (each part's, concatenated), for the next
	// step's thresholds. A stateless estimator ignores it.
	Update(norms []float64)
	// Scale is the factor applied to the weighted sum s, given |s|.
	Scale(norm float64) float64
}

// Stats describes what an estimator did to one batch.
type Stats struct {
	N            int     // samples in the batch
	Clipped      int     // samples whose factor is below 1 (per-sample clipping)
	Dropped      int     // samples left out because their norm was NaN or ±Inf
	MeanNorm     float64 // mean per-sample gradient norm over the finite samples (0 if unknown)
	PreClipNorm  float64 // |s|, the norm of the weighted sum before Scale
	BatchClipped bool    // Scale(|s|) < 1: the whole batch was clipped (Clip-SGD)
}
