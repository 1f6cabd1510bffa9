package kernels

import (
	"math"
	"testing"
)

// sameBits fails t unless got holds want's exact bits (NaN payloads and the
// sign of zero included), naming the first element that differs.
func sameBits(t *testing.T, name string, got, want []float32) {
	t.Helper()
	for i := range want {
		if math.Float32bits(got[i]) != math.Float32bits(want[i]) {
			t.Fatalf("%s, %d elements: element %d is %v, want %v", name, len(want), i, got[i], want[i])
		}
	}
}
