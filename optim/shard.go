package optim

import (
	"runtime"

	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/nn"
)

// shardSpan is the fewest elements a goroutine of an optimizer's step takes:
// below it, starting the goroutine costs more than the update it shares.
const shardSpan = 1 << 16

// updater is an optimizer's elementwise update of elements [lo,hi) of its
// i-th parameter.
type updater interface {
	update(i, lo, hi int)
}

// shard runs u.update over all elements of params, split into one
// contiguous share of the concatenated parameters per goroutine (up to
// GOMAXPROCS, each at least shardSpan elements). The updates are
// elementwise, so the result does not depend on the split.
//
// A step streams every parameter, its gradient and its state through
// memory once, which on AlexNet's 57 M parameters takes one core longer
// than some of the model's layers; two cores halve it (nn/README.md).
// Small models stay on the calling goroutine and allocate nothing.
func shard(params []*nn.Param, u updater) {
	n := 0
	for _, p := range params {
		n += p.Value.Len()
	}
	nw := max(1, min(runtime.GOMAXPROCS(0), n/shardSpan))
	if nw == 1 {
		shareOf(params, u, 0, n)
		return
	}
	shardAmong(params, u, n, nw)
}

// shardAmong is shard's parallel case: nw goroutines, n elements. (Apart,
// so that the serial case's variables do not escape to the heap.)
func shardAmong(params []*nn.Param, u updater, n, nw int) {
	kernels.Parallel(nw, func(w int) { shareOf(params, u, w*n/nw, (w+1)*n/nw) })
}

// shareOf updates elements [lo,hi) of params laid end to end.
func shareOf(params []*nn.Param, u updater, lo, hi int) {
	off := 0
	for i, p := range params {
		l := p.Value.Len()
		if a, b := max(lo-off, 0), min(hi-off, l); a < b {
			u.update(i, a, b)
		}
		off += l
		if off >= hi {
			return
		}
	}
}
