package gpt

import (
	"math"
	"testing"
)

// TestClipWindows counts 250 steps, every third clipping 3 of 8 gradients,
// into windows of ClipWindowSteps and checks them against a direct count;
// merging two runs' windows sums them window by window.
func TestClipWindows(t *testing.T) {
	const steps, clippable = 250, 8
	var w []ClipWindow
	for i := range steps {
		w = addClipWindow(w, i, 3*btoi(i%3 == 0), clippable)
	}
	if len(w) != 3 {
		t.Fatalf("%d windows, want 3: %+v", len(w), w)
	}
	for n, c := range w {
		from, to := n*ClipWindowSteps+1, min((n+1)*ClipWindowSteps, steps)
		var clipped int64
		for s := from; s <= to; s++ {
			if (s-1)%3 == 0 {
				clipped += 3
			}
		}
		want := ClipWindow{from, to, clipped, int64(clippable * (to - from + 1)), Float(float64(clipped) / float64(clippable*(to-from+1)))}
		if c != want {
			t.Errorf("window %d: %+v, want %+v", n, c, want)
		}
	}
	m := mergeClipWindows(mergeClipWindows(nil, w), w[:2])
	if m[0].Clipped != 2*w[0].Clipped || m[1].Clippable != 2*w[1].Clippable || m[2] != w[2] || m[0].Fraction != w[0].Fraction {
		t.Errorf("merged windows %+v from %+v", m, w)
	}
	if f := addClipWindow(nil, 0, 0, 0)[0].Fraction; !math.IsNaN(float64(f)) {
		t.Errorf("a window with nothing to clip has fraction %v, want NaN (null)", f)
	}
}

func btoi(b bool) int {
	if b {
		return 1
	}
	return 0
}
