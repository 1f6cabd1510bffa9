//go:build !purego

package quadratic

import "golang.org/x/sys/cpu"

// useAVX512 selects the vector sampler, fillAVX512: it needs AVX-512 F (with
// the OS saving its registers), DQ (64-bit multiplications and conversions)
// and CD (leading-zero counts).
var useAVX512 = cpu.X86.HasAVX512F && cpu.X86.HasAVX512DQ && cpu.X86.HasAVX512CD

// useIFMA selects fillIFMA as the vector sampler: with AVX-512 IFMA too,
// whose 52-bit multiply-adds compute the PCG states in fewer instructions.
var useIFMA = useAVX512 && cpu.X86.HasAVX512IFMA

var fillVector vectorSampler = fillAVX512

func init() {
	if useIFMA {
		fillVector = fillIFMA
	}
}

// fillAVX512 is the vectorSampler with AVX-512 F, DQ and CD.
//
//go:noescape
func fillAVX512(src *pcg, jump *pcgJumps, cub *[4][256]float64, pow2 *[34]float64, xi *float64, n int) int

// fillIFMA is the vectorSampler with AVX-512 IFMA too.
//
//go:noescape
func fillIFMA(src *pcg, jump *pcgJumps, cub *[4][256]float64, pow2 *[34]float64, xi *float64, n int) int
