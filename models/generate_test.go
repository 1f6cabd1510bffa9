package models

import (
	"errors"
	"math"
	"math/rand/v2"
	"os/exec"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/setting"
)

func TestNextTokenProbs(t *testing.T) {
	logits := []float32{1, 3, -2, 3, 0.5, 2}
	for _, tc := range []struct {
		temperature float64
		topK        int
		kept        []bool
	}{
		{1, 0, []bool{true, true, true, true, true, true}},
		{0.5, 6, []bool{true, true, true, true, true, true}},
		{2, 3, []bool{false, true, false, true, false, true}},
		{1, 2, []bool{false, true, false, true, false, false}},
		// The two tied largest logits are both kept, as nanoGPT keeps
		// every logit ≥ the k-th largest.
		{1, 1, []bool{false, true, false, true, false, false}},
	} {
		p := nextTokenProbs(nil, logits, tc.temperature, tc.topK)
		// Brute force: exp(l/T) over the kept logits, normalised.
		var z float64
		for i, l := range logits {
			if tc.kept[i] {
				z += math.Exp(float64(l) / tc.temperature)
			}
		}
		for i, l := range logits {
			want := 0.0
			if tc.kept[i] {
				want = math.Exp(float64(l)/tc.temperature) / z
			}
			if math.Abs(p[i]-want) > 1e-12 {
				t.Errorf("T=%v top-k %d: p[%d] = %v, want %v", tc.temperature, tc.topK, i, p[i], want)
			}
		}
	}
}

func TestDrawFrequencies(t *testing.T) {
	p := []float64{0.1, 0, 0.6, 0.3}
	rng := rand.New(rand.NewPCG(4, 4))
	const n = 200000
	count := make([]int, len(p))
	for range n {
		count[draw(rng, p)]++
	}
	for i, c := range count {
		f := float64(c) / n
		// 5 standard deviations of a binomial frequency.
		if tol := 5 * math.Sqrt(p[i]*(1-p[i])/n); math.Abs(f-p[i]) > tol || (p[i] == 0 && c > 0) {
			t.Errorf("token %d drawn with frequency %.4f, want %.4f", i, f, p[i])
		}
	}
}

func TestGenerateOptionsCheck(t *testing.T) {
	good := GenerateOptions{Tokens: 5, Temperature: 1, TopK: 0}
	for _, o := range []GenerateOptions{
		{Tokens: 0, Temperature: 1},
		{Tokens: 5, Temperature: 0},
		{Tokens: 5, Temperature: math.NaN()},
		{Tokens: 5, Temperature: math.Inf(1)},
		{Tokens: 5, Temperature: 1, TopK: -1},
		{Tokens: 5, Temperature: 1, Vocab: -1},
	} {
		if o.Check() == nil {
			t.Errorf("%+v accepted", o)
		}
	}
	if err := good.Check(); err != nil {
		t.Errorf("%+v: %v", good, err)
	}
}

// A GPT samples text with no package beyond the core ones: generation
// lives in models, whose dependencies hold no plotting (gonum.org/v1/plot,
// which experiments/gpt pulls in for its figures).
func TestGenerateCoreDeps(t *testing.T) {
	goCmd, err := exec.LookPath("go")
	if err != nil {
		t.Skip("no go command")
	}
	out, err := exec.Command(goCmd, "list", "-deps", ".").Output()
	if err != nil {
		t.Fatal(err)
	}
	for _, dep := range strings.Fields(string(out)) {
		if strings.HasPrefix(dep, "gonum.org/v1/plot") || strings.HasPrefix(dep, "github.com/psclip/psclip/experiments") || strings.HasPrefix(dep, "github.com/psclip/psclip/internal/plotting") {
			t.Errorf("package models depends on %s", dep)
		}
	}
}

// GPT.Generate draws the same tokens for the same seed, others for
// another, all in the vocabulary (or its first Vocab tokens), with a
// prompt longer than the block cropped; a bad prompt is a *setting.Error
// for Prompt.
func TestGPTGenerate(t *testing.T) {
	m, err := NewGPT(smallGPT, 1)
	if err != nil {
		t.Fatal(err)
	}
	o := GenerateOptions{Tokens: 20, Temperature: 1, TopK: 4, Seed: 7}
	prompt := []int32{1, 2, 3, 4, 5, 6, 7, 8, 9, 10} // longer than the block of 8
	a, err := m.Generate(prompt, o)
	if err != nil {
		t.Fatal(err)
	}
	b, _ := m.Generate(prompt, o)
	o.Seed = 8
	c, _ := m.Generate(prompt, o)
	if len(a) != 20 || !slices.Equal(a, b) || slices.Equal(a, c) {
		t.Errorf("seed 7 twice: %v, %v; seed 8: %v", a, b, c)
	}
	for _, tok := range a {
		if tok < 0 || int(tok) >= smallGPT.VocabSize {
			t.Errorf("token %d outside the vocabulary", tok)
		}
	}
	for _, bad := range [][]int32{nil, {3, 11}, {-1}} {
		var se *setting.Error
		if _, err := m.Generate(bad, o); !errors.As(err, &se) || se.Field != "Prompt" {
			t.Errorf("prompt %v: %v, want a *setting.Error for Prompt", bad, err)
		}
	}
	// Vocab keeps the draws among the first tokens (a padded vocabulary's
	// real ones), and at the model's size changes nothing.
	o.Vocab, o.TopK = 3, 0
	few, err := m.Generate(prompt, o)
	if err != nil || slices.ContainsFunc(few, func(t int32) bool { return t >= 3 }) {
		t.Errorf("Vocab 3: %v, %v", few, err)
	}
	o.Vocab, o.TopK, o.Seed = smallGPT.VocabSize, 4, 7
	if all, err := m.Generate(prompt, o); err != nil || !slices.Equal(all, a) {
		t.Errorf("Vocab %d: %v, %v; without it %v", o.Vocab, all, err, a)
	}
	o.Vocab = smallGPT.VocabSize + 1
	var se *setting.Error
	if _, err := m.Generate(prompt, o); !errors.As(err, &se) || se.Field != "Vocab" {
		t.Errorf("Vocab above the model's: %v, want a *setting.Error for Vocab", err)
	}
}
