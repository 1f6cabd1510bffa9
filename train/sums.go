package train

import "math"

// stepSums is what the ranks of a step add up in its one all-reduce besides
// the gradients, as one float64 vector: counts, and the step's per-sample
// losses, per-sample gradient norms and micro-batch norms at their
// positions in the step, zero where another rank computed them. Adding
// zeros is exact, so after the all-reduce every rank holds every loss and
// norm with the bits one process computes, NaN and Inf included, and sums
// them in step order as one process does; counts below 2⁵³ are exact too.
type stepSums struct {
	buf        []float64 // the vector: count, losses, norms, scaleNorms
	count      []float64 // indexed by countFailed…
	losses     []float64 // every sample's loss
	norms      []float64 // per-sample estimators: every sample's gradient norm
	scaleNorms []float64 // MicroBatch scopes: the norm Scale saw, per used micro-batch
}

// The counts of a step, indices into stepSums.count.
const (
	countFailed         = iota // ranks whose part of the step failed
	countClipped               // samples clipped by a per-sample estimator
	countDropped               // samples dropped as non-finite
	countClippedBatches        // MicroBatch scopes: micro-batches Scale shrank
	countSkippedBatches        // micro-batches left out as non-finite
	countUsed                  // samples in the gradient
	countUsedBatches           // micro-batches in the gradient
	numCounts
)

// reset sizes the sums for a step of k micro-batches and n samples, with
// per-sample norms and per-micro-batch norms where asked, all zero.
func (s *stepSums) reset(k, n int, perSample, perBatch bool) {
	size := numCounts + n
	if perSample {
		size += n
	}
	if perBatch {
		size += k
	}
	s.buf = resize(s.buf, size)
	clear(s.buf)
	rest := s.buf
	next := func(l int) []float64 {
		v := rest[:l:l]
		rest = rest[l:]
		return v
	}
	s.count = next(numCounts)
	s.losses = next(n)
	s.norms, s.scaleNorms = nil, nil
	if perSample {
		s.norms = next(n)
	}
	if perBatch {
		s.scaleNorms = next(k)
	}
}

// stats fills the Stats the sums determine: the counts, and the mean of the
// finite losses (NaN if there is none).
func (s *stepSums) stats() Stats {
	st := Stats{
		Samples:        len(s.losses),
		Clipped:        int(s.count[countClipped]),
		Dropped:        int(s.count[countDropped]),
		ClippedBatches: int(s.count[countClippedBatches]),
		SkippedBatches: int(s.count[countSkippedBatches]),
		Loss:           math.NaN(),
	}
	var sum float64
	finite := 0
	for _, l := range s.losses {
		if isFinite(l) {
			sum += l
			finite++
		}
	}
	if finite > 0 {
		st.Loss = sum / float64(finite)
	}
	return st
}

// scaleNorm is the mean over the used micro-batches of the norms Scale saw.
func (s *stepSums) scaleNorm() float64 {
	var sum float64
	for _, g := range s.scaleNorms {
		sum += g // 0 for a micro-batch left out: adding it is exact
	}
	return sum / s.count[countUsedBatches]
}
