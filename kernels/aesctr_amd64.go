//go:build !purego

package kernels

// ctrFast is AESCTR's assembly (aesctr_amd64.s): VAES on ZMM registers
// under the avx512 kernel where the CPU has VAES, AES-NI under avx512 and
// avx2 where it has AES, else nil (crypto/cipher's stream), so that
// PSCLIP_KERNEL=go takes the portable path.
var ctrFast = func() ctrFunc {
	aesNI, vaes := aesFeatures()
	switch {
	case vec == vecAVX512 && aesNI && vaes:
		return ctrVAES
	case (vec == vecAVX512 || vec == vecAVX2) && aesNI:
		return ctrAESNI
	}
	return nil
}()

// aesFeatures reports whether the CPU has AES-NI and VAES (CPUID 1 ECX
// bit 25, CPUID 7 ECX bit 9).
func aesFeatures() (aesNI, vaes bool) {
	_, _, ecx1, _ := cpuid(1, 0)
	_, _, ecx7, _ := cpuid(7, 0)
	return ecx1&(1<<25) != 0, ecx7&(1<<9) != 0
}

// ctrAvailable is AESCTR's assembly this CPU runs, by name.
func ctrAvailable() map[string]ctrFunc {
	aesNI, vaes := aesFeatures()
	fs := map[string]ctrFunc{}
	for _, v := range vecAvailable {
		switch {
		case v == vecAVX512 && aesNI && vaes:
			fs["vaes"] = ctrVAES
		case v == vecAVX2 && aesNI:
			fs["aesni"] = ctrAESNI
		}
	}
	return fs
}

//go:noescape
func ctrVAES(rk *[176]byte, dst *byte, blocks int, lo, hi uint64)

//go:noescape
func ctrAESNI(rk *[176]byte, dst *byte, blocks int, lo, hi uint64)
