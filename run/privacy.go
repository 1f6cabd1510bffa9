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
