package gpt

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/data/text"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/experiments/tail"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// testCorpus is a small character-level corpus of random words.
func testCorpus(t testing.TB) *text.Corpus {
	t.Helper()
	rng := rand.New(rand.NewPCG(9, 9))
	words := strings.Fields("the quick brown fox jumps over a lazy dog while seven wizards quietly hex")
	var b strings.Builder
	for b.Len() < 20000 {
		b.WriteString(words[rng.IntN(len(words))])
		b.WriteByte(" \n"[rng.IntN(2)])
	}
	c, err := text.FromText([]byte(b.String()), text.Char)
	if err != nil {
		t.Fatal(err)
	}
	return c
}

// tinyConfig is a run that takes a fraction of a second.
func tinyConfig(mode ClipMode) Config {
	c := Default()
	c.NLayer, c.NHead, c.NEmbd, c.BlockSize = 1, 2, 16, 16
	c.MicroBatch, c.Accum, c.Steps, c.Warmup = 2, 3, 8, 2
	c.Dropout = 0.1 // so that resuming must restore the dropout stream too
	c.ClipMode, c.Clip = mode, 0.5
	c = c.Trim()
	c.EvalInterval, c.EvalIters, c.CkptInterval = 4, 2, 0
	return c
}

// train runs cfg to the end in dir and returns the summary.
func trainRun(t *testing.T, cfg Config, corpus *text.Corpus, opts RunOptions) (*Summary, error) {
	t.Helper()
	r, err := New(cfg, corpus, opts)
	if err != nil {
		t.Fatal(err)
	}
	return r.Train(context.Background())
}

// interruptAt trains cfg with opts until Train returns after step steps,
// interrupted, leaving the run's checkpoint in opts.Out.
func interruptAt(t *testing.T, cfg Config, corpus *text.Corpus, opts RunOptions, step int) {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	opts.AfterStep = func(done int) {
		if done == step {
			cancel()
		}
	}
	r, err := New(cfg, corpus, opts)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := r.Train(ctx); !errors.Is(err, loop.ErrInterrupted) {
		t.Fatalf("interrupted run: %v, want loop.ErrInterrupted", err)
	}
}

// TestResumeIsExact interrupts a run after a few steps, resumes it, and
// checks that the final weights, optimizer state and log match those of an
// uninterrupted run bit for bit.
func TestResumeIsExact(t *testing.T) {
	corpus := testCorpus(t)
	auto, quantile := tinyConfig(ClipPerSample), tinyConfig(ClipPerSample)
	// 96 sequences a step make ps-clip-auto leave its warm-up (256 norms)
	// at the third step, before the interrupt, so the resumed run needs its
	// restored window.
	auto.Estimator, auto.Clip, auto.MicroBatch, auto.Accum = "ps-clip-auto", 0, 8, 12
	quantile.Estimator = "ps-clip-quantile"
	// At T = 64 materialising saves time in every layer, so a budget of
	// 12 KiB (of the 32 KiB they would take) makes the plan choose.
	long := tinyConfig(ClipPerSample)
	long.BlockSize = 64
	for _, tc := range []struct {
		name   string
		cfg    Config
		budget train.MemoryBudget
	}{
		{"micro-batch", tinyConfig(ClipMicroBatch), train.MemoryBudget{}},
		{"per-sample", tinyConfig(ClipPerSample), train.MemoryBudget{}},
		{"ps-clip-auto", auto, train.MemoryBudget{}},
		{"ps-clip-quantile", quantile, train.MemoryBudget{}},
		{"per-sample, memory budget", long, train.MemoryBudget{Size: 12 << 10}},
		{"per-sample, the default budget", long, train.MemoryBudget{}},
		{"per-sample, auto", long, train.MemoryBudget{Auto: true}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			cfg := tc.cfg
			whole, parts := t.TempDir(), t.TempDir()
			ws, err := trainRun(t, cfg, corpus, RunOptions{Out: whole, PerSampleMemory: tc.budget})
			if err != nil {
				t.Fatal(err)
			}

			interruptAt(t, cfg, corpus, RunOptions{Out: parts, PerSampleMemory: tc.budget}, 3)
			if l, err := checkpoint.Load(filepath.Join(parts, run.CheckpointFile)); err != nil || l.Step != 3 {
				t.Fatalf("checkpoint after the interrupt: %v, step %v; want step 3", err, l)
			}
			s, err := trainRun(t, cfg, corpus, RunOptions{Out: parts, Resume: true, PerSampleMemory: tc.budget})
			if err != nil {
				t.Fatal(err)
			}
			if len(s.Curve) != 3 || s.Curve[0].Step != 0 || s.Curve[2].Step != 8 {
				t.Errorf("resumed run's curve %v; want evaluations at steps 0, 4, 8", s.Curve)
			}
			if len(s.ClipWindows) != 1 || !reflect.DeepEqual(s.ClipWindows, ws.ClipWindows) {
				t.Errorf("resumed run's clip windows %+v; uninterrupted %+v", s.ClipWindows, ws.ClipWindows)
			}
			sameCheckpoints(t, filepath.Join(whole, run.CheckpointFile), filepath.Join(parts, run.CheckpointFile))
			if a, b := logLosses(t, whole), logLosses(t, parts); a != b {
				t.Errorf("logs differ:\nuninterrupted %s\nresumed       %s", a, b)
			}
		})
	}
}

// sameCheckpoints fails unless the two checkpoints hold bit-identical
// weights and optimizer state.
func sameCheckpoints(t *testing.T, a, b string) {
	t.Helper()
	la, err := checkpoint.Load(a)
	if err != nil {
		t.Fatal(err)
	}
	lb, err := checkpoint.Load(b)
	if err != nil {
		t.Fatal(err)
	}
	if la.Step != lb.Step || la.Optimizer.Steps != lb.Optimizer.Steps {
		t.Fatalf("steps %d/%d vs %d/%d", la.Step, la.Optimizer.Steps, lb.Step, lb.Optimizer.Steps)
	}
	for _, pair := range []struct {
		what string
		x, y map[string][]float32
	}{{"weight", data(la.Model), data(lb.Model)}, {"optimizer state", data(la.Optimizer.Tensors), data(lb.Optimizer.Tensors)}} {
		if len(pair.x) == 0 || len(pair.x) != len(pair.y) {
			t.Fatalf("%s: %d vs %d tensors", pair.what, len(pair.x), len(pair.y))
		}
		for name, x := range pair.x {
			y := pair.y[name]
			for i := range x {
				if x[i] != y[i] {
					t.Fatalf("%s %s[%d]: %v uninterrupted, %v resumed", pair.what, name, i, x[i], y[i])
				}
			}
		}
	}
}

func data(m map[string]*tensor.Tensor) map[string][]float32 {
	out := map[string][]float32{}
	for k, v := range m {
		out[k] = v.Data
	}
	return out
}

// logLosses returns the log's steps and losses, without the timings.
func logLosses(t *testing.T, dir string) string {
	t.Helper()
	f, err := os.Open(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	var b strings.Builder
	sc := bufio.NewScanner(f)
	for sc.Scan() {
		var r struct {
			Step     int    `json:"step"`
			Loss     *Float `json:"loss"`
			ValLoss  *Float `json:"val_loss"`
			LR       *Float `json:"lr"`
			GradNorm *Float `json:"grad_norm"`
		}
		if err := json.Unmarshal(sc.Bytes(), &r); err != nil {
			t.Fatalf("log line %q: %v", sc.Text(), err)
		}
		fmt.Fprintf(&b, "%d:", r.Step)
		for _, x := range []*Float{r.Loss, r.ValLoss, r.LR, r.GradNorm} {
			if x != nil {
				fmt.Fprintf(&b, "%v,", float64(*x))
			}
		}
		b.WriteByte(' ')
	}
	return b.String()
}

// TestBadStepsStop poisons the model so that every gradient is NaN: no step
// may touch the weights, each is logged as skipped, and after MaxBadSteps
// the run stops with an error and a checkpoint.
func TestBadStepsStop(t *testing.T) {
	corpus := testCorpus(t)
	for _, mode := range []ClipMode{ClipGlobal, ClipMicroBatch, ClipPerSample} {
		t.Run(string(mode), func(t *testing.T) {
			cfg := tinyConfig(mode)
			cfg.MaxBadSteps = 3
			dir := t.TempDir()
			r, err := New(cfg, corpus, RunOptions{Out: dir})
			if err != nil {
				t.Fatal(err)
			}
			params := r.model.Params()
			params[1].Value.Data[0] = float32(math.NaN()) // a position embedding
			before := params[len(params)-1].Value.Clone()
			_, err = r.Train(context.Background())
			if err == nil || !strings.Contains(err.Error(), "3 consecutive steps") {
				t.Fatalf("error %v, want one about 3 consecutive bad steps", err)
			}
			if !slices.Equal(params[len(params)-1].Value.Data, before.Data) {
				t.Error("a NaN gradient reached the weights")
			}
			l, err := checkpoint.Load(filepath.Join(dir, run.CheckpointFile))
			if err != nil || l.Step != 3 {
				t.Fatalf("checkpoint: %v, %+v; want one at step 3", err, l)
			}
			b, _ := os.ReadFile(filepath.Join(dir, run.LogFile))
			if n := strings.Count(string(b), `"loss":null`); n != 3 || strings.Count(string(b), `"skipped":true`) != 3 {
				t.Errorf("log does not show the 3 skipped steps:\n%s", b)
			}
		})
	}
}

// TestGOMAXPROCSInvariant trains the same run on one and on two threads and
// compares the final weights bit for bit.
func TestGOMAXPROCSInvariant(t *testing.T) {
	corpus := testCorpus(t)
	cfg := tinyConfig(ClipPerSample)
	cfg.NEmbd, cfg.MicroBatch = 32, 4 // enough work to be split among threads
	var dirs []string
	for _, procs := range []int{1, 2} {
		old := runtime.GOMAXPROCS(procs)
		dir := t.TempDir()
		_, err := trainRun(t, cfg, corpus, RunOptions{Out: dir})
		runtime.GOMAXPROCS(old)
		if err != nil {
			t.Fatal(err)
		}
		dirs = append(dirs, dir)
	}
	sameCheckpoints(t, filepath.Join(dirs[0], run.CheckpointFile), filepath.Join(dirs[1], run.CheckpointFile))
}

// TestLogNorms checks that --log-norms logs every sequence's gradient norm
// of every step, which "psclip tail --from" turns into the same tail
// estimates ps-clip-auto's step records report.
func TestLogNorms(t *testing.T) {
	cfg := tinyConfig(ClipPerSample)
	cfg.Estimator, cfg.Clip, cfg.MicroBatch, cfg.Accum, cfg.Dropout = "ps-clip-auto", 0, 8, 12, 0
	dir := t.TempDir()
	if _, err := trainRun(t, cfg, testCorpus(t), RunOptions{Out: dir, LogNorms: true}); err != nil {
		t.Fatal(err)
	}
	b, err := os.ReadFile(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	var last StepRecord
	steps := 0
	for l := range strings.Lines(string(b)) {
		var rec StepRecord
		if err := json.Unmarshal([]byte(l), &rec); err != nil {
			t.Fatal(err)
		}
		if rec.SampleNorms == nil {
			continue
		}
		steps++
		if n := len(rec.SampleNorms); n != cfg.MicroBatch*cfg.Accum {
			t.Errorf("step %d: %d norms, want %d", rec.Step, n, cfg.MicroBatch*cfg.Accum)
		}
		if ready := rec.Step*cfg.MicroBatch*cfg.Accum >= estimator.MinTailSamples; ready == math.IsNaN(float64(rec.PHat)) {
			t.Errorf("step %d: p̂ = %v", rec.Step, rec.PHat)
		}
		last = rec
	}
	if steps != cfg.Steps {
		t.Fatalf("%d step records with norms, want %d", steps, cfg.Steps)
	}
	tr, err := tail.Trace(bytes.NewReader(b), 0)
	if err != nil {
		t.Fatal(err)
	}
	// The trainer's estimate after the last step is over the same norms.
	got := tr.Points[len(tr.Points)-1]
	if got.Step != cfg.Steps || got.P != float64(last.PHat) || got.Sigma != float64(last.SigmaHat) {
		t.Errorf("tail --from: step %d p̂ %v σ̂ %v; the trainer logged p̂ %v σ̂ %v", got.Step, got.P, got.Sigma, last.PHat, last.SigmaHat)
	}

	cfg.ClipMode, cfg.Estimator, cfg.Clip = ClipGlobal, "", 1
	if _, err := New(cfg, testCorpus(t), RunOptions{LogNorms: true}); err == nil || !strings.Contains(err.Error(), "per-sample") {
		t.Errorf("--log-norms in global mode: %v", err)
	}
}

// TestDecaySteps: a run of fewer steps with the DecaySteps of a longer one
// takes the longer run's first steps exactly (the validation loss after
// them is the same to the bit); without it, its schedule decays sooner
// and it does not. A DecaySteps inside the warm-up is refused.
func TestDecaySteps(t *testing.T) {
	corpus := testCorpus(t)
	long := tinyConfig(ClipGlobal)
	long.Steps, long.EvalInterval = 12, 4
	ls, err := trainRun(t, long, corpus, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	short := long
	short.Steps = 4
	for _, c := range []struct {
		decay int
		same  bool
	}{{12, true}, {0, false}} {
		short.DecaySteps = c.decay
		ss, err := trainRun(t, short, corpus, RunOptions{})
		if err != nil {
			t.Fatal(err)
		}
		if got, want := ss.Curve[1], ls.Curve[1]; (got == want) != c.same {
			t.Errorf("DecaySteps %d: step %d val loss %v, the 12-step run's %v (want the same: %v)", c.decay, got.Step, got.ValLoss, want.ValLoss, c.same)
		}
	}
	short.DecaySteps = 1
	var se *setting.Error
	if err := short.Validate(); !errors.As(err, &se) || se.Field != "DecaySteps" {
		t.Errorf("DecaySteps inside the warm-up: %v", err)
	}
}
