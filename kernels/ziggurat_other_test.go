//go:build purego || !amd64

package kernels

// zigAvailable is empty: no assembly.
func zigAvailable() map[string]zigFunc { return nil }
