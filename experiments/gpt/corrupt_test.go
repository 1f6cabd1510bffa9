package gpt

import (
	"bufio"
	"context"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"errors"
	"math"
	"os"
	"path/filepath"
	"slices"
	"sync"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/kernels"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// cleanDigest trains cfg into a fresh directory and returns the SHA-256 of
// its checkpoint's tensor bytes (weights and AdamW moments: the safetensors
// data after the header, whose metadata holds wall times) and of its log
// with the timing fields dropped.
func cleanDigest(t *testing.T, cfg Config) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := trainRun(t, cfg, testCorpus(t), RunOptions{Out: dir}); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	b, err := os.ReadFile(filepath.Join(dir, run.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	h.Write(b[8+binary.LittleEndian.Uint64(b):])
	f, err := os.Open(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "elapsed_s")
		delete(m, "tokens_per_s")
		line, err := json.Marshal(m)
		if err != nil {
			t.Fatal(err)
		}
		h.Write(append(line, '\n'))
	}
	return hex.EncodeToString(h.Sum(nil))
}

// TestCleanRunUnchanged checks that a run without corruption (Corrupt 0,
// the default) trains bit for bit as before corruption existed. The bits
// depend on the GEMM micro-kernel (each rounds its sums in its own order),
// so the digests are pinned per kernel: the avx2 ones were taken with the
// code of commit 7c5a520, before issue 24; the avx512 and go ones with the
// code of d512f16, whose avx2 digests are still 7c5a520's. .ci/run runs
// this test under every kernel the machine has (PSCLIP_KERNEL).
func TestCleanRunUnchanged(t *testing.T) {
	want := map[string]map[ClipMode]string{
		"avx512": {
			ClipGlobal:     "e7e3248a9a16ef1c730d91cfea698b911ad20c052027fa3b8f2ebdd2a73e3c89",
			ClipMicroBatch: "1fd93b2689394f79ae77a84453a4320484943c09244320229096495705afef5c",
			ClipPerSample:  "88bef6bc507bdb3d6be2d052710936e07342b58a3f9e9146e5e3e105390cc973",
			ClipNone:       "6da78c66f2cba9c206281096573d0eb4165b1609e520f1666bc0cc02b34fd849",
		},
		"avx2": {
			ClipGlobal:     "eb467d1c7a2a44399d883e51e612c4d2a7fa3c731caf87f008d42d4b60d8b3a1",
			ClipMicroBatch: "1fd93b2689394f79ae77a84453a4320484943c09244320229096495705afef5c",
			ClipPerSample:  "c5dd39bbf7ae53515e0af66f59fb1ef50e2bb571ae7f69c8a34ec4e8ec1b9983",
			ClipNone:       "6da78c66f2cba9c206281096573d0eb4165b1609e520f1666bc0cc02b34fd849",
		},
		"go": {
			ClipGlobal:     "d5803097451ecc645bdc046d67fb4c2b5b16d1ac13b6fd8c619651f37443467b",
			ClipMicroBatch: "833ca3235a29dbf67b89bf2edd3abf9548501ffd3aaba2fa7b91ea8287a76b2d",
			ClipPerSample:  "dcdfbde5c1c9fcaeb0027c6139eae348d1907d9c14a501ebe6e556c6d23cfb66",
			ClipNone:       "9434b80954ed02257ab75cce57f8c6afaaab34ecfb59a5aa8c65ec33878035c4",
		},
	}[kernels.Name()]
	if want == nil {
		t.Skipf("no digests pinned for the %s micro-kernel", kernels.Name())
	}
	for _, m := range ClipModes {
		if got := cleanDigest(t, tinyConfig(m)); got != want[m] {
			t.Errorf("%s on the %s kernel: digest %s, want %s (the clean run changed)", m, kernels.Name(), got, want[m])
		}
	}
}

// TestCorrupterLayouts draws many steps and checks the corrupted positions
// of each against the definition: exactly round(F·n) of the n = M·K
// sequences; scattered ones cover every position about equally often;
// clustered ones are c consecutive sequences from a multiple of the
// smallest power of two a ≥ c, touching ⌈c/M⌉ micro-batches, and every
// start occurs.
func TestCorrupterLayouts(t *testing.T) {
	for _, tc := range []struct {
		m, k   int
		f      float64
		layout CorruptLayout
		count  int
	}{
		{2, 8, 0.05, LayoutScattered, 1},
		{2, 8, 0.2, LayoutScattered, 3},
		{2, 8, 0.2, LayoutClustered, 3},
		{4, 4, 0.5, LayoutClustered, 8},
		{1, 16, 0.2, LayoutClustered, 3},
		{16, 1, 0.2, LayoutClustered, 3},
		{8, 2, 0.3, LayoutClustered, 5},
		{2, 8, 0.05, LayoutClustered, 1},
		{3, 5, 0.1, LayoutScattered, 2}, // round(1.5) = 2
		{3, 5, 0.03, LayoutScattered, 0},
	} {
		cfg := Default()
		cfg.MicroBatch, cfg.Accum, cfg.BlockSize, cfg.Seed = tc.m, tc.k, 8, 7
		cfg.Corruption = Corruption{tc.f, tc.layout, KindRandom}
		if got := cfg.CorruptPerStep(); got != tc.count {
			t.Fatalf("%+v: CorruptPerStep %d, want %d", tc, got, tc.count)
		}
		c := newCorrupter(&cfg, 10)
		n := tc.m * tc.k
		hits := make([]int, n)
		starts := map[int]bool{}
		a := 1
		for a < tc.count {
			a *= 2
		}
		const steps = 4000
		for range steps {
			c.draw()
			var pos []int
			for i, x := range c.mask {
				if x {
					pos = append(pos, i)
					hits[i]++
				}
			}
			if len(pos) != tc.count {
				t.Fatalf("%+v: %d corrupted sequences, want %d", tc, len(pos), tc.count)
			}
			if tc.layout == LayoutClustered && len(pos) > 0 {
				touched := pos[len(pos)-1]/tc.m - pos[0]/tc.m + 1
				if pos[0]%a != 0 || pos[len(pos)-1]-pos[0] != len(pos)-1 || touched != (tc.count+tc.m-1)/tc.m {
					t.Fatalf("%+v: clustered positions %v", tc, pos)
				}
				starts[pos[0]] = true
			}
		}
		if want := (n-tc.count)/a + 1; tc.layout == LayoutClustered && len(starts) != want {
			t.Errorf("%+v: %d distinct starts, want %d", tc, len(starts), want)
		}
		if tc.layout == LayoutScattered {
			want := float64(steps*tc.count) / float64(n)
			for i, h := range hits {
				if math.Abs(float64(h)-want) > 6*math.Sqrt(want) { // 6 sd of a binomial count, about
					t.Errorf("%+v: position %d corrupted %d times, want about %.0f", tc, i, h, want)
				}
			}
		}
	}
}

// TestCorruptKinds corrupts windows of known tokens and checks each kind
// against its definition, and that the targets are the corrupted window
// shifted by one.
func TestCorruptKinds(t *testing.T) {
	const T, vocab = 12, 7
	for _, kind := range CorruptKinds {
		cfg := Default()
		cfg.MicroBatch, cfg.Accum, cfg.BlockSize, cfg.Seed = 4, 1, T, 3
		cfg.Corruption = Corruption{0.5, LayoutScattered, kind}
		c := newCorrupter(&cfg, vocab)
		for range 50 {
			x, y := make([]int32, 4*T), make([]int32, 4*T)
			for b := range 4 { // window b is 10b, 10b+1, …: clean tokens outside the vocabulary
				for i := range T {
					x[b*T+i], y[b*T+i] = int32(10*b+i), int32(10*b+i+1)
				}
			}
			c.draw()
			c.apply(0, x, y)
			for b := range 4 {
				w := append(slices.Clone(x[b*T:][:T]), y[b*T+T-1])
				if !slices.Equal(w[1:], y[b*T:][:T]) {
					t.Fatalf("%s: targets %v are not the window %v shifted", kind, y[b*T:][:T], w)
				}
				clean := make([]int32, T+1)
				for i := range clean {
					clean[i] = int32(10*b + i)
				}
				if !c.mask[b] {
					if !slices.Equal(w, clean) {
						t.Fatalf("%s: clean window %d changed to %v", kind, b, w)
					}
					continue
				}
				switch kind {
				case KindRandom:
					for _, v := range w {
						if v < 0 || v >= vocab {
							t.Fatalf("random window %v: token outside the vocabulary of %d", w, vocab)
						}
					}
				case KindShuffle:
					s := slices.Clone(w)
					slices.Sort(s)
					if !slices.Equal(s, clean) {
						t.Fatalf("shuffled window %v is not a permutation of %v", w, clean)
					}
				case KindRepeat:
					if !slices.Contains(clean, w[0]) || slices.ContainsFunc(w, func(v int32) bool { return v != w[0] }) {
						t.Fatalf("repeat window %v is not one of %v's tokens repeated", w, clean)
					}
				}
			}
		}
	}
}

// TestCorruptionKeepsCleanBatches checks that corruption changes only the
// sequences it chooses: the others are the clean run's, step by step.
func TestCorruptionKeepsCleanBatches(t *testing.T) {
	corpus := testCorpus(t)
	clean := tinyConfig(ClipGlobal)
	bad := clean
	bad.Corruption = Corruption{0.5, LayoutScattered, KindRandom}
	a, err := New(clean, corpus, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	b, err := New(bad, corpus, RunOptions{})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	T, m := clean.BlockSize, clean.MicroBatch
	for range 5 {
		a.nextBatches()
		b.nextBatches()
		changed := 0
		for j := range a.batches {
			for s := range m {
				xa, xb := a.batches[j].X.Data[s*T:][:T], b.batches[j].X.Data[s*T:][:T]
				ya, yb := a.batches[j].Y[s*T:][:T], b.batches[j].Y[s*T:][:T]
				same := slices.Equal(xa, xb) && slices.Equal(ya, yb)
				switch corrupt := b.corrupt.mask[j*m+s]; {
				case !corrupt && !same:
					t.Fatalf("micro-batch %d sequence %d is not corrupted but differs from the clean run's", j, s)
				case corrupt && !same:
					changed++
				}
			}
		}
		if changed != bad.CorruptPerStep() {
			t.Errorf("%d sequences changed, want the %d corrupted", changed, bad.CorruptPerStep())
		}
	}
}

// TestResumeRefusesOtherCorruption interrupts a corrupted run and resumes
// it with another share, layout or kind: each is refused as other data;
// the same corruption resumes bit for bit.
func TestResumeRefusesOtherCorruption(t *testing.T) {
	corpus := testCorpus(t)
	cfg := tinyConfig(ClipPerSample)
	cfg.Corruption = Corruption{0.5, LayoutScattered, KindShuffle}
	whole, parts := t.TempDir(), t.TempDir()
	if _, err := trainRun(t, cfg, corpus, RunOptions{Out: whole}); err != nil {
		t.Fatal(err)
	}
	interruptAt(t, cfg, corpus, RunOptions{Out: parts}, 3)
	for _, other := range []Corruption{
		{0.25, LayoutScattered, KindShuffle}, {0.5, LayoutClustered, KindShuffle}, {0.5, LayoutScattered, KindRandom}, {},
	} {
		c := cfg
		c.Corruption = other
		_, err := New(c, corpus, RunOptions{Out: parts, Resume: true})
		var de *run.DataChangedError
		var ce *run.ConfigChangedError
		if !errors.As(err, &de) && !errors.As(err, &ce) {
			t.Errorf("resume with %s: %v, want a *run.DataChangedError or *run.ConfigChangedError", other.CorruptionName(), err)
		}
	}
	if _, err := trainRun(t, cfg, corpus, RunOptions{Out: parts, Resume: true}); err != nil {
		t.Fatal(err)
	}
	sameCheckpoints(t, filepath.Join(whole, run.CheckpointFile), filepath.Join(parts, run.CheckpointFile))
	if a, b := logLosses(t, whole), logLosses(t, parts); a != b {
		t.Errorf("logs differ:\nuninterrupted %s\nresumed       %s", a, b)
	}
}

// TestCorruptionValidate checks the corruption's settings errors.
func TestCorruptionValidate(t *testing.T) {
	for _, tc := range []struct {
		c     Corruption
		field string // "" valid
	}{
		{Corruption{}, ""},
		{Corruption{0.2, LayoutClustered, KindRepeat}, ""},
		{Corruption{1, LayoutScattered, KindRandom}, "Corrupt"},
		{Corruption{-0.1, LayoutScattered, KindRandom}, "Corrupt"},
		{Corruption{math.NaN(), LayoutScattered, KindRandom}, "Corrupt"},
		{Corruption{0.2, "", KindRandom}, "CorruptLayout"},
		{Corruption{0.2, LayoutScattered, "noise"}, "CorruptKind"},
		{Corruption{0, LayoutScattered, ""}, "CorruptLayout"},
		{Corruption{0, "", KindRandom}, "CorruptKind"},
	} {
		cfg := tinyConfig(ClipGlobal)
		cfg.Corruption = tc.c
		err := cfg.Validate()
		var se *setting.Error
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%+v: %v", tc.c, err)
		case tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field):
			t.Errorf("%+v: %v, want a *setting.Error naming %s", tc.c, err, tc.field)
		}
	}
}

// TestDetection checks Detection's ratios against counts made by hand.
func TestDetection(t *testing.T) {
	var d Detection
	d.add([]bool{true, true, false, false, true}, []bool{true, false, true, false, false})
	d.merge(Detection{Units: 5, Corrupt: 1, Clipped: 1, CorruptClipped: 1})
	want := Detection{Units: 10, Corrupt: 3, Clipped: 4, CorruptClipped: 2, Precision: 0.5, Recall: Float(2.0 / 3), CorruptShare: 0.3}
	if d != want {
		t.Errorf("detection %+v, want %+v", d, want)
	}
	var empty Detection
	empty.add([]bool{false}, []bool{false})
	if !math.IsNaN(float64(empty.Precision)) || !math.IsNaN(float64(empty.Recall)) || empty.CorruptShare != 0 {
		t.Errorf("nothing clipped or corrupt: %+v, want null precision and recall", empty)
	}
}

// TestDetectionLog trains corrupted runs in the two modes that clip parts
// of a step and checks every step's detection record against the step's
// own counts: the units and corrupt ones the layout implies, and the
// clipped ones the step record reports.
func TestDetectionLog(t *testing.T) {
	corpus := testCorpus(t)
	for _, tc := range []struct {
		mode   ClipMode
		layout CorruptLayout
	}{{ClipPerSample, LayoutScattered}, {ClipMicroBatch, LayoutClustered}, {ClipMicroBatch, LayoutScattered}} {
		cfg := tinyConfig(tc.mode)
		cfg.MicroBatch, cfg.Accum = 2, 4
		if tc.mode == ClipMicroBatch {
			cfg.ClipConvention, cfg.Clip = ConventionMean, 1 // clips some micro-batches and not others
		}
		cfg.Corruption = Corruption{0.375, tc.layout, KindRandom} // 3 of 8 sequences
		dir := t.TempDir()
		sum, err := trainRun(t, cfg, corpus, RunOptions{Out: dir})
		if err != nil {
			t.Fatal(err)
		}
		f, err := os.Open(filepath.Join(dir, run.LogFile))
		if err != nil {
			t.Fatal(err)
		}
		var total Detection
		sc := bufio.NewScanner(f)
		for sc.Scan() {
			var rec StepRecord
			if err := json.Unmarshal(sc.Bytes(), &rec); err != nil || rec.LR == 0 {
				continue // the run record and the evaluations
			}
			d := rec.Detection
			if d == nil {
				t.Fatalf("%s: step %d has no detection", tc.mode, rec.Step)
			}
			units, corrupt, clipped := int64(8), int64(3), int64(rec.ClippedSamples)
			if tc.mode == ClipMicroBatch {
				units, clipped = 4, int64(rec.ClippedBatches)
				corrupt = -1 // scattered: 2 or 3 micro-batches
				if tc.layout == LayoutClustered {
					corrupt = 2 // 3 consecutive sequences from a multiple of 4: 2 micro-batches of 2
				}
			}
			if d.Units != units || (corrupt >= 0 && d.Corrupt != corrupt) || d.Clipped != clipped || d.CorruptClipped > min(d.Corrupt, d.Clipped) {
				t.Errorf("%s %s step %d: detection %+v; want %d units, %d corrupt, %d clipped", tc.mode, tc.layout, rec.Step, *d, units, corrupt, clipped)
			}
			if tc.mode == ClipMicroBatch && tc.layout == LayoutScattered && (d.Corrupt < 2 || d.Corrupt > 3) {
				t.Errorf("scattered step %d: %d corrupt micro-batches, want 2 or 3", rec.Step, d.Corrupt)
			}
			total.Unit = d.Unit
			total.merge(*d)
		}
		f.Close()
		if sum.Detection == nil || *sum.Detection != total {
			t.Errorf("%s: summary detection %+v, the steps' sum %+v", tc.mode, sum.Detection, total)
		}
		if sum.CorruptPerStep != 3 {
			t.Errorf("summary corrupt_per_step %d, want 3", sum.CorruptPerStep)
		}
	}
}

// TestCorruptedRunOnRanks trains a corrupted run on two in-memory ranks.
// Every rank corrupts the same sequences as one process would (the
// corruption follows the seed, not the rank): the weights are the
// one-process run's up to the rounding of the ranks' sums (which a clean
// run shows too), and far from those of the clean run. The ranks log no
// detection, since each sees only its share's clip decisions.
func TestCorruptedRunOnRanks(t *testing.T) {
	corpus := testCorpus(t)
	for _, mode := range []ClipMode{ClipPerSample, ClipMicroBatch} {
		clean := tinyConfig(mode)
		clean.Accum = 4
		cfg := clean
		cfg.Corruption = Corruption{0.25, LayoutClustered, KindRandom}
		one, ranks, cleanDir := t.TempDir(), t.TempDir(), t.TempDir()
		if _, err := trainRun(t, cfg, corpus, RunOptions{Out: one}); err != nil {
			t.Fatal(err)
		}
		if _, err := trainRun(t, clean, corpus, RunOptions{Out: cleanDir}); err != nil {
			t.Fatal(err)
		}
		sums := make([]*Summary, 2)
		errs := make([]error, 2)
		var wg sync.WaitGroup
		for _, c := range dist.Group(2) {
			wg.Go(func() {
				r, err := New(cfg, corpus, RunOptions{Out: ranks, Comm: c}) // rank 0 writes
				if err == nil {
					sums[c.Rank()], err = r.Train(context.Background())
				}
				errs[c.Rank()] = err
			})
		}
		wg.Wait()
		for r, err := range errs {
			if err != nil {
				t.Fatalf("%s rank %d: %v", mode, r, err)
			}
			if sums[r].Detection != nil {
				t.Errorf("%s rank %d: detection %+v, want none on ranks", mode, r, sums[r].Detection)
			}
		}
		w := weights(t, ranks)
		if d := maxDiff(w, weights(t, one)); d > 1e-6 {
			t.Errorf("%s: weights on 2 ranks differ from one process's by up to %g", mode, d)
		}
		if d := maxDiff(w, weights(t, cleanDir)); d < 1e-4 {
			t.Errorf("%s: weights on 2 ranks within %g of the clean run's: the corruption did not reach them", mode, d)
		}
	}
}

// weights returns the model tensors of the checkpoint in dir.
func weights(t *testing.T, dir string) map[string][]float32 {
	t.Helper()
	l, err := checkpoint.Load(filepath.Join(dir, run.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	return data(l.Model)
}

// maxDiff is the largest absolute difference between two sets of tensors
// of the same names and sizes.
func maxDiff(a, b map[string][]float32) float64 {
	var d float64
	for name, x := range a {
		for i, v := range x {
			d = max(d, math.Abs(float64(v-b[name][i])))
		}
	}
	return d
}

// TestCorruptionSameAtEveryK checks that a seed corrupts the same sequences
// with the same tokens however a step's 16 sequences are split into K
// micro-batches of M, in both layouts, and that global clipping, which
// sees only the step's sum, then takes the same step at K = 4 and K = 8 up
// to float32 summation order.
func TestCorruptionSameAtEveryK(t *testing.T) {
	corpus := testCorpus(t)
	for _, layout := range CorruptLayouts {
		t.Run(string(layout), func(t *testing.T) {
			var want [][]float32 // per step: the step's inputs, then targets, then mask
			var grads [][]float64
			for _, k := range []int{4, 8, 1, 16} {
				cfg := tinyConfig(ClipGlobal)
				cfg.MicroBatch, cfg.Accum, cfg.Dropout, cfg.Clip = 16/k, k, 0, 0.05
				cfg.Corruption = Corruption{0.2, layout, KindRepeat}
				r, err := New(cfg, corpus, RunOptions{})
				if err != nil {
					t.Fatal(err)
				}
				defer r.Close()
				for step := range 3 {
					r.nextBatches()
					var got []float32
					for _, b := range r.batches {
						got = append(got, b.X.Data...)
					}
					for _, b := range r.batches {
						for _, y := range b.Y {
							got = append(got, float32(y))
						}
					}
					for _, m := range r.corrupt.mask {
						got = append(got, float32(map[bool]int{false: 0, true: 1}[m]))
					}
					if k == 4 {
						want = append(want, got)
					} else if !slices.Equal(got, want[step]) {
						t.Fatalf("K = %d, step %d: the step's sequences or corrupted positions differ from K = 4's", k, step+1)
					}
					if step == 2 && k <= 8 {
						e, scope, err := cfg.estimator()
						if err != nil {
							t.Fatal(err)
						}
						grads = append(grads, stepGrad(t, r.model, e, scope, r.batches...))
					}
				}
			}
			if n := norm(grads[0]); math.Abs(n-0.05) > 1e-6 {
				t.Fatalf("K = 4: step norm %v, want the threshold 0.05 (the test needs global clipping to clip)", n)
			}
			assertClose(t, "global clipping, K = 8 against K = 4", grads[1], grads[0])
		})
	}
}
