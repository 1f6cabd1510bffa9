package kernels

import "os"

// kernelEnv names the environment variable that forces a micro-kernel:
// PSCLIP_KERNEL=avx2 runs the AVX2 kernels on an AVX-512 machine, =go the
// portable ones, so that a slower path can be timed or tested on a faster
// CPU. The vector passes follow the same choice.
const kernelEnv = "PSCLIP_KERNEL"

// selectKernels drops from ks (best first) the kernels better than the one
// kernelEnv names. Unset, or naming no kernel in ks (one this CPU cannot
// run), it leaves ks as detected.
func selectKernels(ks []*microKernel) []*microKernel {
	name := os.Getenv(kernelEnv)
	for i, k := range ks {
		if k.name == name {
			return ks[i:]
		}
	}
	return ks
}

// Name is the micro-kernel the GEMMs run on this machine under
// PSCLIP_KERNEL: "avx512", "avx2", "neon" or "go" (the portable one).
// Results that carry a timing name it, since it sets the vector width.
func Name() string { return available[0].name }
