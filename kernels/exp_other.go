//go:build purego || !(amd64 || arm64)

package kernels

// Exp and GELUTanh run the portable code where the package has no assembly
// for them.
var (
	expImpl      = expGo
	geluTanhImpl = geluTanhGo
)
