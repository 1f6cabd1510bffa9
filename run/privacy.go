package run

import (
	"math"

	"github.com/psclip/psclip/privacy"
)

// Epsilon is the ε that a dp-sgd run whose steps h records has spent at
// δ (package privacy's default accountant), as the experiments report it;
// NaN for a run that is not private. The history and δ were checked when
// the run was set up (q in (0, 1], σ > 0, δ in (0, 1)), so an accountant
// error is a programming error.
func Epsilon(private bool, h privacy.History, delta float64) Float {
	if !private {
		return Float(math.NaN())
	}
	res, err := privacy.Epsilon(h, delta, privacy.Options{})
	if err != nil {
		panic(err)
	}
	return Float(res.Epsilon)
}

// CheckPrivacy refuses a dp-sgd run whose steps, steps of them at sample
// rate q and noise multiplier σ, package privacy cannot account (σ or the
// number of steps beyond what float64 accounting represents), with
// privacy.Epsilon's *setting.Error, so that the run stops before it starts
// rather than when it first reports its ε.
func CheckPrivacy(q, sigma float64, steps int, delta float64) error {
	_, err := privacy.Epsilon(privacy.History{{SampleRate: q, NoiseMultiplier: sigma, Count: steps}}, delta, privacy.Options{})
	return err
}
