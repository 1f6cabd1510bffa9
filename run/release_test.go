package run

import (
	"encoding/json"
	"os"
	"slices"
	"testing"

	"github.com/psclip/psclip/estimator"
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
