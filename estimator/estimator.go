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
package estimator

// Estimator is a gradient estimator in the two-stage form of the package
// documentation.
type Estimator interface {
	// Name is the estimator's command-line name, e.g. "ps-clip-sgd".
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
