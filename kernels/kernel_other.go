//go:build purego || !(amd64 || arm64)

package kernels

// available lists the micro-kernels this build can run, best first.
var available = selectKernels([]*microKernel{generic})

// best is the micro-kernel Sgemm uses.
var best = generic

// vecAvailable lists the implementations of the vector passes, best first;
// vec is the one in use.
var (
	vecAvailable = []*vecOps{vecGo}
	vec          = vecGo
)
