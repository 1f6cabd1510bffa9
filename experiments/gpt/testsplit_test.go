package gpt

import (
	"context"
	"encoding/json"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"slices"
	"strconv"
	"strings"
	"testing"

	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/run"
)

// heldOut is testCorpus with its last fifth held out as a test split.
func heldOut(t testing.TB) *text.Corpus {
	t.Helper()
	c := testCorpus(t)
	if err := c.HoldOut(0.2); err != nil {
		t.Fatal(err)
	}
	return c
}

// otherTest is c with other test text: the same tokens in reverse order,
// so that the vocabulary is the same.
func otherTest(c *text.Corpus) *text.Corpus {
	d := *c
	d.Test = slices.Clone(c.Test)
	slices.Reverse(d.Test)
	return &d
}

// TestFinalTestLoss checks a run's final test loss against the model read
// back from its checkpoint and evaluated on the test split as validation
// is (EvalIters batches, text.EvalSeed); that result.json and the data
// identity hold it; that the test text changes nothing else; and that a
// corpus without a test split reports none.
func TestFinalTestLoss(t *testing.T) {
	corpus := heldOut(t)
	cfg := tinyConfig(ClipGlobal)
	dir := t.TempDir()
	s, err := trainRun(t, cfg, corpus, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	m, err := LoadModel(dir)
	if err != nil {
		t.Fatal(err)
	}
	want, err := m.Loss(corpus, corpus.Test, cfg.EvalIters, text.EvalSeed, nil)
	if err != nil {
		t.Fatal(err)
	}
	if s.FinalTestLoss == nil || float64(*s.FinalTestLoss) != want {
		t.Fatalf("final test loss %v, want the checkpoint's %v", s.FinalTestLoss, want)
	}
	if val, _ := m.Loss(corpus, corpus.Val, cfg.EvalIters, text.EvalSeed, nil); float64(s.FinalValLoss) != val || val == want {
		t.Errorf("final validation loss %v, the checkpoint's %v, the test loss %v", s.FinalValLoss, val, want)
	}
	b, err := os.ReadFile(filepath.Join(dir, run.ResultFile))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		FinalTestLoss *float64 `json:"final_test_loss"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.FinalTestLoss == nil || *res.FinalTestLoss != want {
		t.Errorf("result.json: final_test_loss %v, want %v", res.FinalTestLoss, want)
	}
	if id := CorpusIdentity(corpus); id.SHA256[TestSplitHash] == "" || id.SHA256[TestSplitHash] == CorpusIdentity(otherTest(corpus)).SHA256[TestSplitHash] {
		t.Errorf("data identity %v: want the test split's hash, which other test text changes", id.SHA256)
	}

	other, err := trainRun(t, cfg, otherTest(corpus), RunOptions{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(other.Curve, s.Curve) || other.FinalTestLoss == nil || *other.FinalTestLoss == *s.FinalTestLoss {
		t.Errorf("other test text: curve %v, test loss %v; want the curve %v and another test loss than %v", other.Curve, other.FinalTestLoss, s.Curve, *s.FinalTestLoss)
	}

	none, err := trainRun(t, cfg, testCorpus(t), RunOptions{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if none.FinalTestLoss != nil || CorpusIdentity(testCorpus(t)).SHA256[TestSplitHash] != "" {
		t.Errorf("no test split: final test loss %v, identity %v", none.FinalTestLoss, CorpusIdentity(testCorpus(t)).SHA256)
	}
}

// TestDPSGDWithholdsTestLoss checks that a dp-sgd run writes neither its
// final test loss nor the test split's hash (the held-out end of the
// private text is private), unless it releases what it withholds; then
// the loss is listed as unprotected.
func TestDPSGDWithholdsTestLoss(t *testing.T) {
	corpus := shakespeare(t)
	if err := corpus.HoldOut(0.1); err != nil {
		t.Fatal(err)
	}
	for _, release := range []bool{false, true} {
		c := dpConfig(7)
		c.Steps, c.Warmup, c.EvalInterval = 2, 1, 2
		c.ReleaseUnprotected = release
		dir := t.TempDir()
		s, err := trainRun(t, c, corpus, RunOptions{Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		if s.FinalTestLoss == nil {
			t.Fatalf("release %v: no final test loss in the summary", release)
		}
		var files []byte
		for _, name := range []string{run.ResultFile, run.LogFile} {
			b, err := os.ReadFile(filepath.Join(dir, name))
			if err != nil {
				t.Fatal(err)
			}
			files = append(files, b...)
		}
		var res struct {
			FinalTestLoss *float64 `json:"final_test_loss"`
			Unprotected   []string `json:"unprotected"`
		}
		b, _ := os.ReadFile(filepath.Join(dir, run.ResultFile))
		if err := json.Unmarshal(b, &res); err != nil {
			t.Fatal(err)
		}
		hash := strings.Contains(string(files), TestSplitHash)
		switch {
		case !release && (res.FinalTestLoss != nil || hash):
			t.Errorf("a private run wrote final_test_loss %v or the test split's hash (%v)", res.FinalTestLoss, hash)
		case release && (res.FinalTestLoss == nil || *res.FinalTestLoss != float64(*s.FinalTestLoss) || !slices.Contains(res.Unprotected, "final_test_loss")):
			t.Errorf("released unprotected: final_test_loss %v (want %v), unprotected %v", res.FinalTestLoss, *s.FinalTestLoss, res.Unprotected)
		}
	}
}

// TestCorruptionStudyTestSplit runs a miniature study on a corpus with a
// held-out test split, twice, with other test text the second time: the
// γ choice and everything trained are the same bit for bit (no choice
// reads the test text), the test losses differ, the cells pair the test
// losses, and the tables report them and say so.
func TestCorruptionStudyTestSplit(t *testing.T) {
	s := miniStudy()
	s.Settings, s.Methods, s.Seeds = s.Settings[1:], []Method{MethodGlobal, MethodMBClipMean, MethodPSClip}, []uint64{1, 2}
	s.Ks = []int{1, 4}
	corpus := heldOut(t)
	dir := t.TempDir()
	res, err := RunCorruptionStudy(context.Background(), s, corpus, RunOptions{Out: dir})
	if err != nil {
		t.Fatal(err)
	}
	other, err := RunCorruptionStudy(context.Background(), s, otherTest(corpus), RunOptions{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(res.Gamma, other.Gamma) {
		t.Errorf("the γ choice depends on the test text: %+v, then %+v", res.Gamma, other.Gamma)
	}
	if len(res.Runs) != len(other.Runs) || res.TestTokens != len(corpus.Test) {
		t.Fatalf("%d and %d runs, %d test tokens (want %d)", len(res.Runs), len(other.Runs), res.TestTokens, len(corpus.Test))
	}
	differ := 0
	for i, r := range res.Runs {
		o := other.Runs[i]
		if r.FinalValLoss != o.FinalValLoss || !reflect.DeepEqual(r.Curve, o.Curve) || r.ClippedFraction != o.ClippedFraction {
			t.Errorf("run %d (%s %s seed %d): trained differently with other test text", i, r.Setting.CorruptionName(), r.Method, r.Seed)
		}
		if r.FinalTestLoss == nil || o.FinalTestLoss == nil {
			t.Fatalf("run %d: no final test loss", i)
		}
		if *r.FinalTestLoss != *o.FinalTestLoss {
			differ++
		}
	}
	if differ != len(res.Runs) {
		t.Errorf("%d of %d runs have the same test loss on other test text", len(res.Runs)-differ, len(res.Runs))
	}
	for _, c := range res.Cells {
		tc := c.Test
		if tc == nil || len(tc.FinalTestLoss) != len(s.Seeds) || (tc.Paired == nil) != (c.Method == MethodGlobal) {
			t.Fatalf("%s K=%d %s: test %+v", c.SettingName, c.K, c.Method, tc)
		}
		if tc.Paired == nil {
			continue
		}
		ref := res.Cells[slices.IndexFunc(res.Cells, func(g Cell) bool { return g.Setting == c.Setting && g.K == c.K && g.Method == MethodGlobal })]
		var sum float64
		for i := range tc.FinalTestLoss {
			sum += float64(tc.FinalTestLoss[i] - ref.Test.FinalTestLoss[i])
		}
		want, _ := stats.Pair(floats(tc.FinalTestLoss), floats(ref.Test.FinalTestLoss))
		if math.Abs(float64(tc.Paired.Mean)-sum/2) > 1e-12 || !reflect.DeepEqual(*tc.Paired, want) {
			t.Errorf("%s K=%d %s: paired test %+v, want mean %v", c.SettingName, c.K, c.Method, tc.Paired, sum/2)
		}
	}
	tables := res.Tables()
	for _, want := range []string{
		"(final validation loss):", // the γ choice
		"Final clean test loss on the held-out test split (the last " + strconv.Itoa(len(corpus.Test)) + " tokens of the text",
		"| setting | method | final test loss (mean ± sd) |",
		"| K × M | method | final test loss (mean ± sd) |",
		"the same method at K = 4 in final test loss",
	} {
		if !strings.Contains(tables, want) {
			t.Errorf("tables without %q:\n%s", want, tables)
		}
	}
	if strings.Contains(tables, "final val loss") {
		t.Errorf("tables report the validation loss beside a test split:\n%s", tables)
	}
	md, err := os.ReadFile(filepath.Join(dir, StudyTableMD))
	if err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, run.ResultsFile))
	if err != nil {
		t.Fatal(err)
	}
	var back StudyResults
	if err := json.Unmarshal(b, &back); err != nil {
		t.Fatal(err)
	}
	if back.Tables() != string(md) || string(md) != tables {
		t.Errorf("the tables of results.json differ from tables.md")
	}
}
