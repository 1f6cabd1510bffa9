//go:build !amd64 || purego

package quadratic

// Without AVX-512 assembly, pareto.fill takes one value at a time.
const useAVX512, useIFMA = false, false

func fillAVX512(*pcg, *pcgJumps, *[4][256]float64, *[34]float64, *float64, int) int {
	panic("quadratic: fillAVX512 without AVX-512")
}

func fillIFMA(*pcg, *pcgJumps, *[4][256]float64, *[34]float64, *float64, int) int {
	panic("quadratic: fillIFMA without AVX-512")
}

var fillVector vectorSampler = fillAVX512
