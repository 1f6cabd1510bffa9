package checkpoint

import (
	"path/filepath"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
)

// A typed-nil optimizer (a nil *optim.SGD in the interface) is "no
// optimizer", as the documentation says of nil: Save writes a model-only
// checkpoint and Restore restores the model only. A nil parameter is an
// error, not a panic.
func TestTypedNilOptimizer(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weights.safetensors")
	a := newRun(t, 1)
	var none *optim.SGD
	if err := Save(path, Meta{}, a.params, none); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Optimizer != nil {
		t.Fatal("optimizer state appeared from a nil optimizer")
	}
	b := newRun(t, 2)
	if err := l.Restore(b.params, none); err != nil {
		t.Fatal(err)
	}
	if err := Save(path, Meta{}, []*nn.Param{nil}, nil); err == nil {
		t.Error("Save of a nil parameter succeeded")
	}
	if err := l.Restore([]*nn.Param{nil}, nil); err == nil {
		t.Error("Restore into a nil parameter succeeded")
	}
}
