package optim

import (
	"math"

	"github.com/psclip/psclip/setting"
)

// Schedule gives the learning rate of each step. A rate it gives that is
// not a positive normal float32 is refused by Optimizer.SetLR; Validate
// refuses such a schedule of this package before a run starts.
type Schedule interface {
	// LR is the learning rate of step it, counted from 0.
	LR(it int) float64
}

// Constant is a fixed learning rate.
type Constant float64

// LR returns c.
func (c Constant) LR(int) float64 { return float64(c) }

// Validate checks that c is a positive normal float32, as SetLR does.
func (c Constant) Validate() error { return checkLR(float64(c)) }

// WarmupCosine is nanoGPT's get_lr: a linear warm-up over Warmup steps to
// Peak, then a cosine decay that reaches Min at step Decay and stays there:
//
//	it < Warmup:           Peak·(it+1)/(Warmup+1)
//	Warmup ≤ it ≤ Decay:   Min + ½(1 + cos(π·(it−Warmup)/(Decay−Warmup)))·(Peak−Min)
//	it > Decay:            Min
//
// With Decay ≤ Warmup there is no decay phase: Min follows the warm-up.
type WarmupCosine struct {
	Peak, Min     float64
	Warmup, Decay int
}

// NewWarmupCosine returns nanoGPT's schedule with its default minimum, a
// tenth of the peak.
func NewWarmupCosine(peak float64, warmup, decay int) WarmupCosine {
	return WarmupCosine{Peak: peak, Min: peak / 10, Warmup: warmup, Decay: decay}
}

// LR is the learning rate of step it.
func (s WarmupCosine) LR(it int) float64 {
	if it < s.Warmup {
		return s.Peak * float64(it+1) / float64(s.Warmup+1)
	}
	if it > s.Decay || s.Decay <= s.Warmup {
		return s.Min
	}
	ratio := float64(it-s.Warmup) / float64(s.Decay-s.Warmup)
	coeff := 0.5 * (1 + math.Cos(math.Pi*ratio))
	return s.Min + coeff*(s.Peak-s.Min)
}

// Validate checks that the rates s gives are ones SetLR accepts: Peak a
// positive normal float32, Min 0 or one, Min ≤ Peak, and Warmup and Decay
// ≥ 0. A Min of 0 suits a run whose steps stay below Decay (nanoGPT's
// min_lr = 0): from step Decay on the rate is 0, which SetLR refuses. Its
// errors are *setting.Error values.
func (s WarmupCosine) Validate() error {
	if err := setting.First(setting.Positive32("Peak", s.Peak), setting.NonNegative32("Min", s.Min),
		setting.NonNegative("Warmup", s.Warmup), setting.NonNegative("Decay", s.Decay)); err != nil {
		return err
	}
	if s.Min > s.Peak {
		return setting.Errorf("Min", s.Min, "at most Peak = %g", s.Peak)
	}
	return nil
}
