//go:build !purego

package kernels

// zigAvailable is the ziggurat's assembly this CPU runs, by kernel.
func zigAvailable() map[string]zigFunc {
	fs := map[string]zigFunc{}
	for _, v := range vecAvailable {
		switch v {
		case vecAVX512:
			fs["avx512"] = zigguratAVX512
		case vecAVX2:
			fs["avx2"] = zigguratAVX2
		}
	}
	return fs
}
