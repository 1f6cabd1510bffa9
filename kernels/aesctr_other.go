//go:build purego || !amd64

package kernels

// ctrFast is nil: AESCTR reads crypto/cipher's stream.
var ctrFast ctrFunc

// ctrAvailable is empty: no assembly.
func ctrAvailable() map[string]ctrFunc { return nil }
