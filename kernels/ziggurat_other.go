//go:build purego || !amd64

package kernels

// zigFast and zigVAES are nil: ZigguratAdd runs its portable code, and
// AESCTR.ZigguratAdd makes the keystream and runs ZigguratAdd.
var (
	zigFast zigFunc
	zigVAES zigAESFunc
)
