//go:build !purego

package kernels

// rowStatsAsm and gradSumsAsm do RowStats and GradSums for sixteen rows
// where the machine and PSCLIP_KERNEL allow AVX-512 (gathers of sixteen
// rows' values), else nil: the portable code does all rows.
var rowStatsAsm, gradSumsAsm = func() (func(x *float32, d int, eps float64, mean, rstd *float64), func(dy, h, w *float32, d int, sg, sgx *float32)) {
	if vec == vecAVX512 {
		return rowStatsAVX512, gradSumsAVX512
	}
	return nil, nil
}()

//go:noescape
func rowStatsAVX512(x *float32, d int, eps float64, mean, rstd *float64)

//go:noescape
func gradSumsAVX512(dy, h, w *float32, d int, sg, sgx *float32)
