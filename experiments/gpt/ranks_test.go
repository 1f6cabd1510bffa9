package gpt

import (
	"errors"
	"testing"

	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/setting"
)

// A data-parallel run with fewer micro-batches per step (Accum) than ranks
// is refused before it opens its directory, with a *setting.Error for
// Accum. (One rank of the group is enough: the refusal comes before any
// collective operation.)
func TestRanksWithoutMicroBatch(t *testing.T) {
	corpus := testCorpus(t)
	cfg := tinyConfig(ClipPerSample) // Accum 3
	r, err := New(cfg, corpus, RunOptions{Out: t.TempDir(), Comm: dist.Group(4)[0]})
	var se *setting.Error
	if !errors.As(err, &se) || se.Field != "Accum" {
		t.Errorf("Accum 3 on 4 ranks: %v, want a *setting.Error for Accum", err)
	}
	if r != nil {
		r.Close()
	}
}
