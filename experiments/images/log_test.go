package images

import (
	"math"
	"strings"
	"testing"
)

func TestNormBin(t *testing.T) {
	for _, c := range []struct {
		x    float64
		want int
	}{
		{1e-9, 0}, {0.01, 0}, {0.0134, 1}, {1, 16}, {0.99, 15}, {10, 24}, {9.99e2, 39}, {1e3, 39}, {1e30, 39},
	} {
		if got := NormBin(c.x); got != c.want {
			t.Errorf("NormBin(%g) = %d, want %d", c.x, got, c.want)
		}
	}
	for b := range NormBins {
		if got := NormBin(NormBinCentre(b)); got != b {
			t.Errorf("the centre of bin %d, %g, is in bin %d", b, NormBinCentre(b), got)
		}
	}
}

// TestDetectionAcc: the accumulator splits norms and decisions by the
// images' noise flags, and leaves out a step whose decisions do not cover
// its batch.
func TestDetectionAcc(t *testing.T) {
	noisy := []bool{false, true, false, true}
	var d detectionAcc
	d.add([]bool{true, true, false}, []float64{2, 20, math.NaN()}, []int{0, 1, 2}, noisy)
	d.add([]bool{false, true}, []float64{4, 40}, []int{2, 3}, noisy)
	d.add([]bool{true}, []float64{1, 1}, []int{0, 1}, noisy) // one decision for two samples
	r := d.record()
	if r.Samples != 5 || r.Noisy != 2 || r.Clipped != 3 || r.NoisyClipped != 2 {
		t.Errorf("counts %+v", r.Detection)
	}
	if r.Precision != Float(2.0/3) || r.Recall != 1 || r.NoisyShare != 0.4 || r.MeanNormClean != 3 || r.MeanNormNoisy != 30 {
		t.Errorf("precision %v recall %v share %v norms %v / %v", r.Precision, r.Recall, r.NoisyShare, r.MeanNormClean, r.MeanNormNoisy)
	}
	if r.HistClean[NormBin(2)] != 1 || r.HistClean[NormBin(4)] != 1 || r.HistNoisy[NormBin(20)] != 1 || r.HistNoisy[NormBin(40)] != 1 {
		t.Errorf("histograms %v, %v", r.HistClean, r.HistNoisy)
	}
}

// TestAugmentTable: the table sums every epoch of every seed of a method,
// and divides each operation's clip rate by the method's overall rate.
func TestAugmentTable(t *testing.T) {
	epoch := func(none, inv, sub0, sub1 AugmentCount) EpochRecord {
		return EpochRecord{Augment: &AugmentClipping{
			Ops:         map[string]AugmentCount{AugmentNone: none, "Invert": inv},
			SubPolicies: []AugmentCount{sub0, sub1},
		}}
	}
	// Seed 1: 8 samples, 2 clipped (both inverted); seed 2: 12 samples,
	// 3 clipped (1 inverted). Invert: 2+1 of 4+4; none: 2 of 4+8.
	r := &Results{Experiment: Experiment{Seeds: []uint64{1, 2}}, Runs: []RunResult{
		{Name: "PS-Clip-SGD γ=1", Seed: 1, Summary: Summary{Curve: []EpochRecord{
			epoch(AugmentCount{Samples: 4}, AugmentCount{Samples: 4, Clipped: 2}, AugmentCount{Samples: 4, Clipped: 2}, AugmentCount{Samples: 4}),
		}}},
		{Name: "PS-Clip-SGD γ=1", Seed: 2, Summary: Summary{Curve: []EpochRecord{
			epoch(AugmentCount{Samples: 8, Clipped: 2}, AugmentCount{Samples: 4, Clipped: 1}, AugmentCount{Samples: 6, Clipped: 3}, AugmentCount{Samples: 6}),
		}}},
		{Name: "SGD", Seed: 1, Summary: Summary{Curve: []EpochRecord{{}}}},
	}}
	got := r.AugmentTable()
	for _, want := range []string{
		"| Invert | 40.0 | 37.50 (× 1.50) |",
		"| none | 60.0 | 16.67 (× 0.67) |",
		"| all | 100.0 | 25.00 |",
	} {
		if !strings.Contains(got, want) {
			t.Errorf("table lacks %q:\n%s", want, got)
		}
	}
	if strings.Contains(got, "SGD:") && !strings.Contains(got, "PS-Clip-SGD γ=1:") || strings.Count(got, "clipped %") != 1 {
		t.Errorf("a column for a method that logged nothing:\n%s", got)
	}
	if (&Results{Runs: []RunResult{{Name: "SGD"}}}).AugmentTable() != "" {
		t.Error("a table without any logged counts")
	}
}
