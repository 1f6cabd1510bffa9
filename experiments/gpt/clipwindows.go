package gpt

// ClipWindowSteps is the width, in steps, of the windows over which a run
// reports the share of gradients it clipped (Summary.ClipWindows): when in
// training a method clips, not only how much over the run.
const ClipWindowSteps = 100

// ClipWindow is the clipping of steps From to To (1-based, inclusive;
// ClipWindowSteps of them but in a run's last window): Clipped of
// Clippable gradients were clipped (steps in global mode, micro-batches in
// micro-batch mode, sequences in per-sample mode).
type ClipWindow struct {
	From      int   `json:"from_step"`
	To        int   `json:"to_step"`
	Clipped   int64 `json:"clipped"`
	Clippable int64 `json:"clippable"`
	// Fraction is Clipped/Clippable; null with nothing to clip.
	Fraction Float `json:"clipped_fraction"`
}

// addClipWindow counts step i's (0-based) clipped of clippable gradients
// in its window of w.
func addClipWindow(w []ClipWindow, i, clipped, clippable int) []ClipWindow {
	n := i / ClipWindowSteps
	for len(w) <= n {
		w = append(w, ClipWindow{From: len(w)*ClipWindowSteps + 1})
	}
	c := &w[n]
	c.To = i + 1
	c.Clipped += int64(clipped)
	c.Clippable += int64(clippable)
	c.Fraction = ratio(c.Clipped, c.Clippable)
	return w
}

// mergeClipWindows adds the counts of src's windows to dst's, window by
// window (both start at step 1), and returns dst.
func mergeClipWindows(dst, src []ClipWindow) []ClipWindow {
	for n, w := range src {
		if len(dst) <= n {
			dst = append(dst, ClipWindow{From: w.From})
		}
		c := &dst[n]
		c.To = max(c.To, w.To)
		c.Clipped += w.Clipped
		c.Clippable += w.Clippable
		c.Fraction = ratio(c.Clipped, c.Clippable)
	}
	return dst
}
