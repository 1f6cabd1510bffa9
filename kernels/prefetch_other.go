//go:build purego || !(amd64 || arm64)

package kernels

// prefetch does nothing where the package has no assembly: Go has no
// prefetch instruction.
func prefetch(s []float32) {}
