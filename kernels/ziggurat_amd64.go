//go:build !purego

package kernels

// zigFast is ZigguratAdd's assembly (ziggurat_amd64.s) for whole multiples
// of 8 words, nil where the portable kernel is in use.
var zigFast = func() zigFunc {
	switch vec {
	case vecAVX512:
		return zigguratAVX512
	case vecAVX2:
		return zigguratAVX2
	}
	return nil
}()

//go:noescape
func zigguratAVX512(d *float32, w *byte, n int, std float64, layers *[256][2]float64, rejected *uint8)

//go:noescape
func zigguratAVX2(d *float32, w *byte, n int, std float64, layers *[256][2]float64, rejected *uint8)

// zigVAES is AESCTR.ZigguratAdd's kernel (aesctr_amd64.s) where
// AESCTR's keystream is VAES's and ZigguratAdd's fast path AVX-512's,
// else nil.
var zigVAES = func() zigAESFunc {
	if _, vaes := aesFeatures(); vec == vecAVX512 && vaes && ctrFast != nil {
		return zigguratVAES
	}
	return nil
}()

//go:noescape
func zigguratVAES(rk *[176]byte, w *byte, n int, lo, hi uint64, d *float32, std float64, layers *[256][2]float64, rejected *uint8)
