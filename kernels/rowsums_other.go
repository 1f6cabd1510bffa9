//go:build purego || !amd64

package kernels

// rowStatsAsm and gradSumsAsm are nil: the portable code does all rows.
var (
	rowStatsAsm func(x *float32, d int, eps float64, mean, rstd *float64)
	gradSumsAsm func(dy, h, w *float32, d int, sg, sgx *float32)
)
