//go:build purego || !amd64

package kernels

// im2colAsm is nil: the portable code unfolds.
var im2colAsm func(x *float32, plane, c int, offs *int, taps int, masks *uint16, nvec int, dst *float32)
