package run

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"testing"

	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/privacy"
)

// A dp-sgd run writes of a record only the keys Released declares, in
// their order, wherever they stand (in lists, in nested objects); a
// declared whole value (the configuration) is written as it is; a key no
// one declared, such as one a trainer adds tomorrow, is withheld. With
// ReleaseUnprotected everything is written, and the record lists the
// undeclared keys under "unprotected". A result opens with the privacy
// keys.
func TestRelease(t *testing.T) {
	type point struct {
		Epoch     int     `json:"epoch"`
		TrainLoss float64 `json:"train_loss"`
		TestAcc   float64 `json:"test_acc"`
	}
	rec := struct {
		Config   map[string]any `json:"config"`
		NewStat  float64        `json:"a_new_statistic"`
		Epsilon  float64        `json:"epsilon"`
		Curve    []point        `json:"curve"`
		Position struct {
			Epoch int `json:"epoch"`
			Norms []float64
		} `json:"pos"`
	}{Config: map[string]any{"seed": 3, "clip": 0.1}, NewStat: 1.5, Epsilon: 2.25, Curve: []point{{1, 0.7, 0.5}, {2, 0.6, 0.625}}}
	rec.Position.Norms = []float64{1, 2}
	b, err := json.Marshal(rec)
	if err != nil {
		t.Fatal(err)
	}
	p := &Privacy{Secret: privacy.NewSecret(0)}
	for _, tc := range []struct {
		release, head bool
		want          string
	}{
		{false, false, `{"config":{"clip":0.1,"seed":3},"epsilon":2.25,"curve":[{"epoch":1,"test_acc":0.5},{"epoch":2,"test_acc":0.625}],"pos":{"epoch":0}}`},
		{false, true, `{"private":true,"config":{"clip":0.1,"seed":3},"epsilon":2.25,"curve":[{"epoch":1,"test_acc":0.5},{"epoch":2,"test_acc":0.625}],"pos":{"epoch":0}}`},
		{true, true, `{"private":false,"not_private_because":["` + BecauseUnprotected + `"],` + string(b[1:len(b)-1]) + `,"unprotected":["Norms","a_new_statistic","train_loss"]}`},
	} {
		p.ReleaseUnprotected = tc.release
		got, err := p.releaseObject(b, tc.head)
		if err != nil || string(got) != tc.want {
			t.Errorf("release %v, head %v: %s (%v)\nwant %s", tc.release, tc.head, got, err, tc.want)
		}
	}
	keys, err := Unprotected(rec)
	if err != nil || !slices.Equal(keys, []string{"Norms", "a_new_statistic", "train_loss"}) {
		t.Errorf("Unprotected: %v (%v)", keys, err)
	}
	if got, _ := (*Privacy)(nil).releaseObject(b, true); string(got) != string(b) {
		t.Errorf("a run without dp-sgd writes %s, want %s", got, b)
	}
}

// NotPrivateBecause names every reason: a fixed seed, shuffled batches,
// released statistics; a run with none of them is private.
func TestNotPrivateBecause(t *testing.T) {
	p := Privacy{Secret: privacy.NewSecret(0)}
	if !p.Private() || p.NotPrivateBecause() != nil {
		t.Errorf("secret, Poisson, nothing released: %v", p.NotPrivateBecause())
	}
	p = Privacy{Secret: privacy.NewSecret(4), Shuffled: true, ReleaseUnprotected: true}
	if want := []string{BecauseFixedSeed, BecauseShuffled, BecauseUnprotected}; p.Private() || !slices.Equal(p.NotPrivateBecause(), want) {
		t.Errorf("got %v, want %v", p.NotPrivateBecause(), want)
	}
}

// A run whose estimator adds noise (dp-sgd) without a Privacy is refused
// before anything is written: a trainer cannot forget the release.
func TestNoisyNeedsPrivacy(t *testing.T) {
	est, err := estimator.NewDPSGD(1, 1, 0)
	if err != nil {
		t.Fatal(err)
	}
	dir := t.TempDir()
	r, err := New(Spec{Kind: "toy", Config: toyConfig{Steps: 1}, Steps: 1, Estimator: est}, Options{Out: dir})
	if err == nil {
		r.Close()
		t.Fatal("a dp-sgd run without Spec.Privacy accepted")
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 0 {
		t.Errorf("the refused run left %d files", len(entries))
	}
}

// A dp-sgd run records the hashes of its public data only: a hash of the
// training set in its checkpoint would tell whoever holds the checkpoint
// whether a given dataset is the one trained on. Its resume checks the
// public parts; a run that releases everything records all of them.
func TestPrivateRunRecordsPublicDataOnly(t *testing.T) {
	private, public := Hash([]byte("the private training set")), Hash([]byte("the public test set"))
	data := Data{Source: "d", SHA256: map[string]string{"train": private, "test": public}}
	start := func(dir string, d Data, p *Privacy, resume bool) error {
		est, err := estimator.NewDPSGD(1, 1, 0)
		if err != nil {
			t.Fatal(err)
		}
		m := &toy{w: nn.NewParam("w", 1), rng: rand.NewPCG(1, 2)}
		if m.opt, err = optim.NewSGD([]*nn.Param{m.w}, optim.SGDConfig{LR: 0.1}); err != nil {
			t.Fatal(err)
		}
		cfg := toyConfig{Steps: 3}
		m.r, err = New(Spec{Kind: "toy", Config: cfg, Data: d, Steps: cfg.Steps, Params: []*nn.Param{m.w}, Optimizer: m.opt,
			Estimator: est, RNGs: map[string]RNG{"rng": m.rng}, State: &m.st, Privacy: p}, Options{Out: dir, Resume: resume})
		if err != nil {
			return err
		}
		if resume {
			return m.r.Close()
		}
		return m.train(context.Background())
	}
	for _, unprotected := range []bool{false, true} {
		dir := t.TempDir()
		p := &Privacy{Secret: privacy.NewSecret(0), ReleaseUnprotected: unprotected}
		if err := start(dir, data, p, false); err != nil {
			t.Fatal(err)
		}
		ckpt, err := os.ReadFile(filepath.Join(dir, CheckpointFile))
		if err != nil {
			t.Fatal(err)
		}
		if got := bytes.Contains(ckpt, []byte(private)); got != unprotected {
			t.Errorf("unprotected %v: the checkpoint holds the training set's hash: %v", unprotected, got)
		}
		if !bytes.Contains(ckpt, []byte(public)) {
			t.Errorf("unprotected %v: the checkpoint lacks the test set's hash", unprotected)
		}
		if unprotected {
			continue
		}
		// Resume: the public part is checked, the private one cannot be.
		other := Data{Source: "d", SHA256: map[string]string{"train": private, "test": Hash([]byte("another test set"))}}
		var changed *DataChangedError
		if err := start(dir, other, p, true); !errors.As(err, &changed) {
			t.Errorf("resume on another test set: %v, want a *DataChangedError", err)
		}
		if err := start(dir, data, p, true); err != nil {
			t.Errorf("resume on the same data: %v", err)
		}
	}
}
