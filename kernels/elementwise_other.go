//go:build purego || !(amd64 || arm64)

package kernels

// elem is the implementation of the elementwise passes in use.
var elem = elemGo
