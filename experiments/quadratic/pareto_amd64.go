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

// fillVector is the vector sampler in use.
var fillVector = func() func(*pcg, *pcgJumps, *[4][256]float64, *[34]float64, *float64, int) int {
	if useIFMA {
		return fillIFMA
	}
	return fillAVX512
}()

// fillAVX512 fills xi[:n] as pareto.fill does, eight values at a time, and
// stops before a group with a word for the far tail: it returns how many
// values it wrote (a multiple of 8) and leaves src after the last of them.
//
//go:noescape
func fillAVX512(src *pcg, jump *pcgJumps, cub *[4][256]float64, pow2 *[34]float64, xi *float64, n int) int

// fillIFMA is fillAVX512 with AVX-512 IFMA.
//
//go:noescape
func fillIFMA(src *pcg, jump *pcgJumps, cub *[4][256]float64, pow2 *[34]float64, xi *float64, n int) int
