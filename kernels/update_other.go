//go:build purego || !(amd64 || arm64)

package kernels

// update is the implementation of the optimizers' updates in use.
var update = updateGo
