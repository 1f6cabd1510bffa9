//go:build !amd64 || purego

package quadratic

func sampleNormsAVX512(_, _ *float64, _, _ int, _ *float64) {
	panic("quadratic: sampleNormsAVX512 without AVX-512")
}

func weightedSumsAVX512(_, _ *float64, _ int, _ *float64, _ int, _, _ *float64, _ uint16) (float64, float64) {
	panic("quadratic: weightedSumsAVX512 without AVX-512")
}
