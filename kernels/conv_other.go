//go:build purego || !amd64

package kernels

// im2colAsm and col2imAsm are nil: the portable code unfolds and folds.
var (
	im2colAsm func(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32)
	col2imAsm func(cols, x *float32, plane, c int, back *int, taps int, masks *uint16, nvec int)
)
