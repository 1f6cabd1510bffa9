package images

import (
	"errors"
	"testing"

	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/setting"
)

// A data-parallel run whose steps would leave a rank without a micro-batch
// is refused before it opens its directory, with a *setting.Error for
// Accum: too few micro-batches, or an epoch whose last batch (180 training
// images, the other 20 validate: 180 % 32 = 20) holds fewer images than
// ranks. (One rank of the group is
// enough: the refusal comes before any collective operation.)
func TestRanksWithoutMicroBatch(t *testing.T) {
	d := testData(t)
	for _, tc := range []struct{ batch, accum, ranks int }{
		{16, 1, 2},
		{16, 0, 2},   // Accum 0 is 1
		{32, 24, 21}, // 24 ≥ 21, but the last batch of 20 images gives 20 micro-batches
	} {
		cfg := tinyConfig("sgd")
		cfg.Batch, cfg.Accum = tc.batch, tc.accum
		r, err := New(cfg, d, RunOptions{Out: t.TempDir(), Comm: dist.Group(tc.ranks)[0]})
		var se *setting.Error
		if !errors.As(err, &se) || se.Field != "Accum" {
			t.Errorf("batch %d, accum %d, %d ranks: %v, want a *setting.Error for Accum", tc.batch, tc.accum, tc.ranks, err)
		}
		if r != nil {
			r.Close()
		}
	}
}
