//go:build purego || !amd64

package kernels

// zigFast is nil: ZigguratAdd runs its portable code.
var zigFast zigFunc
