//go:build openblas && cgo

package main

import "github.com/psclip/psclip/internal/openblas"

func init() {
	openBLAS = &library{openblas.Sgemm, openblas.SetThreads, openblas.Core, openblas.Config}
}
