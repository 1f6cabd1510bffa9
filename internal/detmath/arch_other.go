//go:build !amd64

package detmath

// Package math's Exp and Log are not this package's off amd64.
const mathExp, mathLog = false, false
