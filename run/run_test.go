package run

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/train"
)

// toy is a trainer of the smallest kind: one parameter that every step
// moves by a draw of its random stream, and a log line per step, padded to
// pad bytes (long lines).
type toy struct {
	w    *nn.Param
	opt  *optim.SGD
	rng  *rand.PCG
	st   struct{ Sum float64 }
	r    *Run
	pad  int
	seen int // log lines kept from earlier sessions
}

type toyConfig struct {
	Steps int    `json:"steps"`
	Pad   int    `json:"pad"`
	Note  string `json:"note"`
}

func newToy(t *testing.T, cfg toyConfig, data Data, o Options) (*toy, error) {
	t.Helper()
	m := &toy{w: nn.NewParam("w", 1), rng: rand.NewPCG(1, 2), pad: cfg.Pad}
	var err error
	if m.opt, err = optim.NewSGD([]*nn.Param{m.w}, optim.SGDConfig{LR: 0.1}); err != nil {
		t.Fatal(err)
	}
	m.r, err = New(Spec{Kind: "toy", Config: cfg, Data: data, Steps: cfg.Steps, Params: []*nn.Param{m.w}, Optimizer: m.opt,
		Estimator: estimator.SGD{}, RNGs: map[string]RNG{"rng": m.rng}, State: &m.st}, o)
	return m, err
}

func (m *toy) Begin(kept [][]byte) error { m.seen = len(kept); return nil }

func (m *toy) Step(i int) (train.Stats, error) {
	v := float64(m.rng.Uint64()%1000) / 1000
	m.w.Value.Data[0] += float32(v)
	m.st.Sum += v
	return train.Stats{}, m.r.Log(map[string]any{"step": i + 1, "w": m.w.Value.Data[0], "pad": strings.Repeat("x", m.pad)})
}

func (m *toy) After(done int) (bool, error) { return done%3 == 0, nil }
func (m *toy) Describe(int) string          { return "" }

func (m *toy) train(ctx context.Context) error {
	if err := m.r.Train(ctx, m); err != nil {
		return err
	}
	return m.r.Finish(map[string]any{"config": m.r.spec.Config, "data": m.r.spec.Data, "w": m.w.Value.Data[0]})
}

var toyData = Data{Source: "toy", SHA256: map[string]string{"train": Hash([]byte("train"))}}

// trainToy trains a toy run in dir to the end, or until step stop
// (interrupted) if stop > 0.
func trainToy(t *testing.T, cfg toyConfig, o Options, stop int) *toy {
	t.Helper()
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	o.AfterStep = func(done int) {
		if done == stop {
			cancel()
		}
	}
	m, err := newToy(t, cfg, toyData, o)
	if err != nil {
		t.Fatal(err)
	}
	err = m.train(ctx)
	if stop > 0 && !errors.Is(err, loop.ErrInterrupted) || stop == 0 && err != nil {
		t.Fatalf("train (stop %d): %v", stop, err)
	}
	return m
}

// snapshot is every file under dir with its content's hash.
func snapshot(t *testing.T, dir string) string {
	t.Helper()
	var b strings.Builder
	err := filepath.WalkDir(dir, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		fi, _ := d.Info()
		fmt.Fprintf(&b, "%s %v %d", path, fi.Mode(), fi.Size())
		if d.Type().IsRegular() {
			c, err := os.ReadFile(path)
			if err != nil {
				return err
			}
			fmt.Fprintf(&b, " %x", sha256.Sum256(c))
		}
		b.WriteByte('\n')
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return b.String()
}

// TestFreshRunIntoRunRefused: a fresh run into a directory that holds a
// run is refused before anything is written: the directory stays byte for
// byte as it was.
func TestFreshRunIntoRunRefused(t *testing.T) {
	dir := t.TempDir()
	cfg := toyConfig{Steps: 7}
	trainToy(t, cfg, Options{Out: dir}, 0)
	before := snapshot(t, dir)
	_, err := newToy(t, cfg, toyData, Options{Out: dir})
	var ee *ExistsError
	if !errors.As(err, &ee) || ee.Dir != dir || !strings.Contains(err.Error(), LogFile) {
		t.Fatalf("fresh run into a run: %v, want an *ExistsError naming the log", err)
	}
	if after := snapshot(t, dir); after != before {
		t.Errorf("the refused run changed the directory:\n%s\nthen\n%s", before, after)
	}
	// Restart starts it over.
	m := trainToy(t, cfg, Options{Out: dir, Restart: true}, 0)
	if m.seen != 0 || lines(t, dir) != 7 {
		t.Errorf("restarted run kept %d lines, log has %d; want 0 and 7", m.seen, lines(t, dir))
	}
}

func lines(t *testing.T, dir string) int {
	b, err := os.ReadFile(filepath.Join(dir, LogFile))
	if err != nil {
		t.Fatal(err)
	}
	return bytes.Count(b, []byte{'\n'})
}

// TestResumeLongLines interrupts a run whose log lines are longer than
// 1 MiB and resumes it: the log and the result must be those of an
// uninterrupted run.
func TestResumeLongLines(t *testing.T) {
	cfg := toyConfig{Steps: 7, Pad: 1<<20 + 100}
	whole, parts := t.TempDir(), t.TempDir()
	want := trainToy(t, cfg, Options{Out: whole}, 0)
	trainToy(t, cfg, Options{Out: parts}, 4) // checkpointed after step 4
	got := trainToy(t, cfg, Options{Out: parts, Resume: true}, 0)
	if got.seen != 4 {
		t.Errorf("resume kept %d log lines, want 4", got.seen)
	}
	a, _ := os.ReadFile(filepath.Join(whole, LogFile))
	b, _ := os.ReadFile(filepath.Join(parts, LogFile))
	if !bytes.Equal(a, b) || got.w.Value.Data[0] != want.w.Value.Data[0] || got.st != want.st {
		t.Errorf("resumed run differs: w %v vs %v, %d vs %d log bytes", got.w.Value.Data[0], want.w.Value.Data[0], len(b), len(a))
	}
}

// TestResumeRefused covers what a resume must refuse, each time leaving the
// directory as it was.
func TestResumeRefused(t *testing.T) {
	cfg := toyConfig{Steps: 7}
	for _, tc := range []struct {
		name  string
		spoil func(dir string)
		cfg   toyConfig
		data  Data
		check func(error) bool
	}{
		{"log missing", func(dir string) { os.Remove(filepath.Join(dir, LogFile)) }, cfg, toyData,
			func(err error) bool {
				var e *NotResumableError
				return errors.As(err, &e) && strings.Contains(err.Error(), "missing")
			}},
		{"log shorter than the checkpoint", func(dir string) { truncateLines(t, dir, 2) }, cfg, toyData,
			func(err error) bool {
				var e *NotResumableError
				return errors.As(err, &e) && strings.Contains(err.Error(), "2 complete lines")
			}},
		{"log of another run", func(dir string) { editLog(t, dir, `"step":2`, `"step":9`) }, cfg, toyData,
			func(err error) bool {
				var e *NotResumableError
				return errors.As(err, &e) && strings.Contains(err.Error(), "another run")
			}},
		{"other data", func(string) {}, cfg, Data{Source: "elsewhere", SHA256: map[string]string{"train": Hash([]byte("other"))}},
			func(err error) bool {
				var e *DataChangedError
				return errors.As(err, &e) && strings.Contains(err.Error(), "train: sha256") && strings.Contains(err.Error(), "elsewhere")
			}},
		{"other configuration", func(string) {}, toyConfig{Steps: 7, Note: "x"}, toyData,
			func(err error) bool {
				var e *ConfigChangedError
				return errors.As(err, &e) && strings.Contains(err.Error(), "note")
			}},
		{"no checkpoint", func(dir string) {
			os.Remove(filepath.Join(dir, CheckpointFile))
			os.Remove(filepath.Join(dir, checkpoint.PrevPath(CheckpointFile)))
		}, cfg, toyData, func(err error) bool {
			var e *NotResumableError
			return errors.As(err, &e) && strings.Contains(err.Error(), "no checkpoint")
		}},
		{"checkpoint of an older psclip", func(dir string) { oldCheckpoint(t, dir) }, cfg, toyData,
			func(err error) bool {
				var e *NotResumableError
				return errors.As(err, &e) && strings.Contains(err.Error(), "older psclip")
			}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			trainToy(t, cfg, Options{Out: dir}, 4)
			tc.spoil(dir)
			before := snapshot(t, dir)
			_, err := newToy(t, tc.cfg, tc.data, Options{Out: dir, Resume: true})
			if !tc.check(err) {
				t.Errorf("resume: %v", err)
			}
			if after := snapshot(t, dir); after != before {
				t.Errorf("the refused resume changed the directory")
			}
		})
	}
}

func truncateLines(t *testing.T, dir string, n int) {
	b, _ := os.ReadFile(filepath.Join(dir, LogFile))
	ls := bytes.SplitAfter(b, []byte{'\n'})
	os.WriteFile(filepath.Join(dir, LogFile), bytes.Join(ls[:n], nil), 0o644)
}

func editLog(t *testing.T, dir, old, new string) {
	b, _ := os.ReadFile(filepath.Join(dir, LogFile))
	if !bytes.Contains(b, []byte(old)) {
		t.Fatalf("log lacks %s", old)
	}
	os.WriteFile(filepath.Join(dir, LogFile), bytes.Replace(b, []byte(old), []byte(new), 1), 0o644)
}

// oldCheckpoint rewrites the checkpoints as psclip wrote them before the run
// layer: without its state.
func oldCheckpoint(t *testing.T, dir string) {
	path := filepath.Join(dir, CheckpointFile)
	l, err := checkpoint.Load(path)
	if err != nil {
		t.Fatal(err)
	}
	delete(l.Extra, extraRun)
	os.Remove(checkpoint.PrevPath(path))
	p := nn.NewParam("w", 1)
	if err := checkpoint.Save(path, l.Meta, []*nn.Param{p}, nil); err != nil {
		t.Fatal(err)
	}
	os.Remove(checkpoint.PrevPath(path))
}

// TestReuse: an experiment reuses a finished run of the same configuration
// and data, refuses one of other data, and starts over a run that stopped
// before its first checkpoint.
func TestReuse(t *testing.T) {
	dir := t.TempDir()
	cfg := toyConfig{Steps: 7}
	trainToy(t, cfg, Options{Out: dir}, 0)
	trained := 0
	fresh := func(o Options) (*map[string]any, error) { trained++; return nil, nil }
	r, err := Reuse(Options{Out: dir, Resume: true}, cfg, toyData, fresh)
	if err != nil || trained != 0 || (*r)["w"] == nil {
		t.Errorf("finished run: %v, %v, trained %d times", r, err, trained)
	}
	other := Data{Source: "b", SHA256: map[string]string{"train": "x"}}
	var de *DataChangedError
	if _, err := Reuse(Options{Out: dir, Resume: true}, cfg, other, fresh); !errors.As(err, &de) {
		t.Errorf("other data: %v", err)
	}
	var ce *ConfigChangedError
	if _, err := Reuse(Options{Out: dir, Resume: true}, toyConfig{Steps: 8}, toyData, fresh); !errors.As(err, &ce) {
		t.Errorf("other configuration: %v", err)
	}
	empty := t.TempDir()
	os.WriteFile(filepath.Join(empty, LogFile), []byte("{}\n"), 0o644)
	var got Options
	Reuse(Options{Out: empty, Resume: true}, cfg, toyData, func(o Options) (*int, error) { got = o; return nil, nil })
	if got.Resume || !got.Restart {
		t.Errorf("a run without checkpoint is trained with %+v, want Restart", got)
	}
}

func TestCheckMemory(t *testing.T) {
	if MachineMemory() == 0 {
		t.Skip("this system does not say how much memory it has")
	}
	err := CheckMemory("the model", 1e30)
	var re *ResourceError
	if !errors.As(err, &re) || strings.Count(err.Error(), "\n") != 0 || !strings.Contains(err.Error(), "the model need about") {
		t.Errorf("1e30 bytes: %v", err)
	}
	if err := CheckMemory("a byte", 1); err != nil {
		t.Errorf("1 byte: %v", err)
	}
}

func TestPrepareOutput(t *testing.T) {
	dir := t.TempDir()
	file := filepath.Join(dir, "file")
	os.WriteFile(file, nil, 0o644)
	var oe *OutputError
	for _, err := range []error{PrepareDir(file, true), PrepareDir(filepath.Join(file, "sub"), true), PrepareFile(dir, true)} {
		if !errors.As(err, &oe) {
			t.Errorf("%v, want an *OutputError", err)
		}
	}
	if err := PrepareDir(filepath.Join(dir, "a", "b"), false); err != nil {
		t.Error(err)
	}
	if _, err := os.Stat(filepath.Join(dir, "a")); err == nil {
		t.Error("PrepareDir created the directory")
	}
	if err := PrepareFile(filepath.Join(dir, "new.jsonl"), false); err != nil {
		t.Error(err)
	}
	if entries, _ := os.ReadDir(dir); len(entries) != 1 {
		t.Errorf("%d entries left, want only the file", len(entries))
	}
}

// Issue 26: an output goes into a fresh place, replaces files only when
// asked, and never into a run directory, even when asked.
func TestPrepareOutputRefusesOverwrite(t *testing.T) {
	dir := t.TempDir()
	mk := func(p string) string {
		p = filepath.Join(dir, p)
		os.MkdirAll(filepath.Dir(p), 0o755)
		if err := os.WriteFile(p, []byte("keep"), 0o644); err != nil {
			t.Fatal(err)
		}
		return p
	}
	full := filepath.Dir(mk("full/old.json"))
	file := mk("file.jsonl")
	rd := t.TempDir()
	d, err := OpenDir(Options{Out: rd, Kind: "gpt run"}, runFiles...)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(rd, LogFile), nil, 0o644); err != nil { // a run's log
		t.Fatal(err)
	}
	d.Close()
	var (
		ow *OverwriteError
		dk *DirKindError
	)
	for _, c := range []struct {
		name string
		err  error
		want any // nil: no error
	}{
		{"empty dir", PrepareDir(t.TempDir(), false), nil},
		{"non-empty dir", PrepareDir(full, false), &ow},
		{"non-empty dir, replace", PrepareDir(full, true), nil},
		{"run dir", PrepareDir(rd, false), &dk},
		{"run dir, replace", PrepareDir(rd, true), &dk},
		{"existing file", PrepareFile(file, false), &ow},
		{"existing file, replace", PrepareFile(file, true), nil},
		{"a run's log", PrepareFile(filepath.Join(rd, LogFile), true), &dk},
		{"new file in a run dir", PrepareFile(filepath.Join(rd, "new.jsonl"), true), &dk},
	} {
		switch {
		case c.want == nil && c.err != nil:
			t.Errorf("%s: %v", c.name, c.err)
		case c.want != nil && !errors.As(c.err, c.want):
			t.Errorf("%s: %v, want a %T", c.name, c.err, c.want)
		}
	}
	if !strings.Contains(PrepareDir(rd, true).Error(), "the directory of a gpt run") {
		t.Errorf("%v: does not name the run's kind", PrepareDir(rd, true))
	}
}

// Issue 26: a directory holds one kind of run: the kind its lock file
// records, or, for an older directory, the kind its files tell.
func TestDirKindsDoNotMix(t *testing.T) {
	recorded := t.TempDir()
	d, err := OpenDir(Options{Out: recorded, Kind: "gpt run"}, runFiles...)
	if err != nil {
		t.Fatal(err)
	}
	os.WriteFile(filepath.Join(recorded, LogFile), nil, 0o644)
	d.Close()
	// Directories of an earlier psclip: a lock without a kind.
	oldRun, oldExp := t.TempDir(), t.TempDir()
	os.WriteFile(filepath.Join(oldRun, LogFile), nil, 0o644)
	os.Mkdir(filepath.Join(oldExp, RunsDir), 0o755)
	for _, dir := range []string{oldRun, oldExp} {
		os.WriteFile(filepath.Join(dir, LockFile), []byte("1\n"), 0o644)
	}
	var dk *DirKindError
	for _, c := range []struct {
		dir, kind string
		ok        bool
		files     []string
	}{
		{recorded, "gpt run", true, runFiles},
		{recorded, "cifar run", false, runFiles},
		{recorded, "gpt experiment", false, experimentFiles},
		{oldRun, "gpt experiment", false, experimentFiles},
		{oldExp, "cifar run", false, runFiles},
		{oldExp, "", true, runFiles}, // no kind: not checked
	} {
		d, err := OpenDir(Options{Out: c.dir, Kind: c.kind, Restart: true}, c.files...)
		if c.ok != (err == nil) || !c.ok && !errors.As(err, &dk) {
			t.Errorf("%s as a %q: %v", c.dir, c.kind, err)
		}
		d.Close()
	}
	if b, _ := os.ReadFile(filepath.Join(recorded, LockFile)); !strings.HasSuffix(string(b), "\ngpt run\n") {
		t.Errorf("the lock file holds %q, want the PID and the kind", b)
	}
}

func TestDataDiff(t *testing.T) {
	a := Data{Source: "a", SHA256: map[string]string{"train": "1", "val": "2"}, GoVersion: "go1.26.0"}
	b := Data{Source: "b", SHA256: map[string]string{"train": "1", "val": "3"}, GoVersion: "go1.26.1"}
	if d := a.Diff(a); d != nil {
		t.Errorf("same data: %v", d)
	}
	d := b.Diff(a)
	if len(d) != 2 || !strings.HasPrefix(d[0], "val: ") || !strings.Contains(d[1], "go1.26.0 in the run, go1.26.1 now") {
		t.Errorf("diff %q", d)
	}
	// Data moved elsewhere is the same data.
	b.SHA256["val"], b.GoVersion = "2", a.GoVersion
	if d := b.Diff(a); d != nil {
		t.Errorf("moved data: %v", d)
	}
	js, _ := json.Marshal(a)
	var back Data
	if json.Unmarshal(js, &back) != nil || back.Diff(a) != nil {
		t.Errorf("JSON round trip: %s", js)
	}
}

// TestReadOnly: a read-only run (a data-parallel run's other processes)
// restores the checkpoint while another process holds the directory, trains
// to the same weights, and writes nothing.
func TestReadOnly(t *testing.T) {
	cfg := toyConfig{Steps: 7}
	whole, parts := t.TempDir(), t.TempDir()
	want := trainToy(t, cfg, Options{Out: whole}, 0)
	trainToy(t, cfg, Options{Out: parts}, 4)
	holder, err := OpenDir(Options{Out: parts, Resume: true}, runFiles...)
	if err != nil {
		t.Fatal(err)
	}
	defer holder.Close()
	before := snapshot(t, parts)
	got := trainToy(t, cfg, Options{Out: parts, Resume: true, ReadOnly: true}, 0)
	if got.seen != 4 || got.w.Value.Data[0] != want.w.Value.Data[0] {
		t.Errorf("read-only resume: %d kept lines, w %v; want 4 and %v", got.seen, got.w.Value.Data[0], want.w.Value.Data[0])
	}
	if snapshot(t, parts) != before {
		t.Error("a read-only run wrote to the directory")
	}
}

// TestOpenDirRemovesStaleTemps: a run killed while writing its result or
// rewriting its log leaves a temporary copy; the next session that locks
// the directory removes it, and nothing else.
func TestOpenDirRemovesStaleTemps(t *testing.T) {
	dir := t.TempDir()
	stale := []string{"." + ResultFile + ".tmp123", "." + LogFile + ".tmp4567"}
	kept := []string{".notes.tmp1", "." + ResultFile + ".tmpx", "other.json"}
	for _, n := range append(slices.Clone(stale), kept...) {
		if err := os.WriteFile(filepath.Join(dir, n), []byte("x"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, n := range []string{LogFile, LockFile} { // a run of an earlier psclip
		if err := os.WriteFile(filepath.Join(dir, n), nil, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	d, err := OpenDir(Options{Out: dir, Resume: true}, runFiles...)
	if err != nil {
		t.Fatal(err)
	}
	defer d.Close()
	for _, n := range stale {
		if _, err := os.Stat(filepath.Join(dir, n)); !errors.Is(err, fs.ErrNotExist) {
			t.Errorf("stale %s still there (%v)", n, err)
		}
	}
	for _, n := range kept {
		if _, err := os.Stat(filepath.Join(dir, n)); err != nil {
			t.Errorf("%s, not a temporary of a run file, was removed: %v", n, err)
		}
	}
}
