package privacy

import "github.com/psclip/psclip/setting"

// CheckDelta refuses a δ outside (0, 1/n), n the records ε is for (named
// by what, "training images"): at δ ≥ 1/n a mechanism that publishes one
// random record is (0, δ)-private. Its error is a *setting.Error naming
// "Delta".
func CheckDelta(delta float64, n int, what string) error {
	if !(delta > 0 && delta < 1/float64(n)) {
		return setting.Errorf("Delta", delta, "below 1/N = %.3g (N = %d %s), above 0", 1/float64(n), n, what)
	}
	return nil
}
