package checkpoint

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io/fs"
	"math"
	"math/rand/v2"
	"os"
	"path/filepath"
	"runtime"
	"strconv"
	"strings"
	"testing"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/safetensors"
)

// run is a small training state: a model, an AdamW optimizer that has made
// a few steps, and a generator.
type run struct {
	params []*nn.Param
	opt    optim.Optimizer
	pcg    *rand.PCG
}

func newRun(t testing.TB, seed uint64) *run {
	t.Helper()
	r := &run{pcg: rand.NewPCG(seed, 1)}
	rng := rand.New(r.pcg)
	r.params = []*nn.Param{nn.NewParam("features.0.weight", 4, 3, 2, 2), nn.NewParam("features.0.bias", 4), nn.NewParam("classifier.weight", 10, 16)}
	for _, p := range r.params {
		for i := range p.Value.Data {
			p.Value.Data[i] = float32(rng.NormFloat64())
		}
	}
	// Values whose bits a sloppy round trip would change.
	r.params[1].Value.Data[0] = float32(math.Copysign(0, -1))
	r.params[1].Value.Data[1] = math.Float32frombits(0x7fc00001) // NaN with a payload
	r.params[1].Value.Data[2] = math.Float32frombits(1)          // smallest denormal
	opt, err := optim.NewAdamW(optim.DecayGroups(r.params, 0.1), optim.AdamWConfig{LR: 1e-3, Beta1: 0.9, Beta2: 0.95, Eps: 1e-8})
	if err != nil {
		t.Fatal(err)
	}
	r.opt = opt
	for range 3 {
		for _, p := range r.params {
			for i := range p.Grad.Data {
				p.Grad.Data[i] = float32(rng.NormFloat64())
			}
		}
		opt.Step()
	}
	return r
}

func (r *run) meta(t testing.TB, step int) Meta {
	m := Meta{Step: step, Config: map[string]string{"lr": "0.001", "batch": "64"}, Extra: map[string]string{"best_val_loss": "1.88"}}
	if err := m.SetRNG("data", r.pcg); err != nil {
		t.Fatal(err)
	}
	return m
}

func save(t testing.TB, path string, r *run, step int) {
	t.Helper()
	if err := Save(path, r.meta(t, step), r.params, r.opt); err != nil {
		t.Fatal(err)
	}
}

func sameBits(a, b []float32) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if math.Float32bits(a[i]) != math.Float32bits(b[i]) {
			return false
		}
	}
	return true
}

func TestRoundTripIsBitIdentical(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	a := newRun(t, 1)
	save(t, path, a, 300)

	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Fallback != nil || l.Path != path || l.Warning() != "" {
		t.Fatalf("fresh checkpoint: Path %s, Fallback %v", l.Path, l.Fallback)
	}
	if l.Step != 300 || l.Extra["best_val_loss"] != "1.88" || l.Config["lr"] != "0.001" {
		t.Fatalf("meta = %+v", l.Meta)
	}
	if err := l.CheckConfig(map[string]string{"lr": "0.001", "batch": "64"}); err != nil {
		t.Fatal(err)
	}

	b := newRun(t, 2) // different values, same shapes
	if err := l.Restore(b.params, b.opt); err != nil {
		t.Fatal(err)
	}
	if err := l.RestoreRNG("data", b.pcg); err != nil {
		t.Fatal(err)
	}
	for i, p := range a.params {
		if !sameBits(p.Value.Data, b.params[i].Value.Data) {
			t.Fatalf("%s differs after the round trip", p.Name)
		}
	}
	sa, sb := a.opt.State(), b.opt.State()
	if sa.Steps != sb.Steps || len(sa.Tensors) != len(sb.Tensors) || len(sa.Tensors) != 6 {
		t.Fatalf("optimizer state: %d steps %d tensors, want %d %d", sb.Steps, len(sb.Tensors), sa.Steps, len(sa.Tensors))
	}
	for k, v := range sa.Tensors {
		if !sameBits(v.Data, sb.Tensors[k].Data) {
			t.Fatalf("optimizer tensor %s differs", k)
		}
	}
	if a.pcg.Uint64() != b.pcg.Uint64() {
		t.Fatal("the restored generator does not continue the saved one")
	}
	// Saving the restored run gives the same file, byte for byte.
	again := filepath.Join(t.TempDir(), "ckpt.safetensors")
	b.pcg = rand.NewPCG(1, 1)
	l.RestoreRNG("data", b.pcg)
	save(t, again, b, 300)
	x, _ := os.ReadFile(path)
	y, _ := os.ReadFile(again)
	if string(x) != string(y) {
		t.Fatal("saving a restored checkpoint does not reproduce the file")
	}
}

func TestModelOnly(t *testing.T) {
	path := filepath.Join(t.TempDir(), "weights.safetensors")
	a := newRun(t, 1)
	if err := Save(path, Meta{}, a.params, nil); err != nil {
		t.Fatal(err)
	}
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	if l.Optimizer != nil {
		t.Fatal("optimizer state appeared from nowhere")
	}
	b := newRun(t, 2)
	if err := l.Restore(b.params, b.opt); err == nil || !strings.Contains(err.Error(), "no optimizer state") {
		t.Fatalf("restoring an optimizer from a model-only checkpoint: %v", err)
	}
	if err := l.Restore(b.params, nil); err != nil {
		t.Fatal(err)
	}
}

// Issue 26: a safetensors file of another program (no checkpoint
// metadata) is a *ForeignError, wrong input, not a damaged checkpoint.
func TestForeignSafetensors(t *testing.T) {
	path := filepath.Join(t.TempDir(), "model.safetensors")
	w := []safetensors.Tensor{safetensors.New("weight", []int{2}, []float32{1, 2})}
	if err := safetensors.WriteFile(path, w, map[string]string{"format": "pt"}); err != nil {
		t.Fatal(err)
	}
	_, err := Load(path)
	var fe *ForeignError
	if !errors.As(err, &fe) || fe.Path != path {
		t.Errorf("Load of a foreign file: %v, want a *ForeignError naming it", err)
	}
}

// Every truncation and every single-byte change of a checkpoint is detected.
func TestDamageIsDetected(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	r := newRun(t, 1)
	r.params = r.params[:2] // keep the file small: every byte is tried
	r.opt, _ = optim.NewSGD(r.params, optim.SGDConfig{LR: 0.1, Momentum: 0.9})
	r.opt.Step()
	save(t, path, r, 1)
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	// In memory, through the same checks as Load, for speed.
	try := func(what string, b []byte) {
		f, err := safetensors.Read(bytes.NewReader(b), int64(len(b)))
		if err == nil {
			_, err = decode("damaged", f)
		}
		if err == nil {
			t.Fatalf("%s: accepted", what)
		}
	}
	for n := range len(good) {
		try("truncated to "+strconv.Itoa(n)+" bytes", good[:n])
	}
	try("one byte appended", append(good[:len(good):len(good)], 0))
	b := make([]byte, len(good))
	for i := range good {
		for _, flip := range []byte{0x01, 0x20, 0x80} {
			copy(b, good)
			b[i] ^= flip
			try("byte "+strconv.Itoa(i)+" ^ "+strconv.Itoa(int(flip)), b)
		}
	}
	t.Logf("%d-byte checkpoint: %d truncations and %d byte changes detected", len(good), len(good)+1, 3*len(good))

	// Through files, with errors that name the file.
	damaged := filepath.Join(dir, "damaged.safetensors")
	for _, n := range []int{0, 7, 8, 100, len(good) / 2, len(good) - 1} {
		os.WriteFile(damaged, good[:n], 0o644)
		if _, err := Load(damaged); err == nil || !strings.Contains(err.Error(), damaged) {
			t.Fatalf("truncated to %d bytes: err = %v, want one naming the file", n, err)
		}
	}
	copy(b, good)
	b[len(b)-1] ^= 1
	os.WriteFile(damaged, b, 0o644)
	if _, err := Load(damaged); err == nil || !strings.Contains(err.Error(), damaged+": checksum mismatch") {
		t.Fatalf("last byte changed: err = %v", err)
	}
}

func TestFallbackToPrevious(t *testing.T) {
	r := newRun(t, 1)
	damage := map[string]func(path string){
		"corrupt": func(path string) {
			b, _ := os.ReadFile(path)
			b[len(b)-3] ^= 0xff
			os.WriteFile(path, b, 0o644)
		},
		"truncated": func(path string) {
			b, _ := os.ReadFile(path)
			os.WriteFile(path, b[:len(b)/2], 0o644)
		},
		"missing": func(path string) { os.Remove(path) },
	}
	for name, hurt := range damage {
		path := filepath.Join(t.TempDir(), "ckpt.safetensors")
		save(t, path, r, 100)
		if _, err := os.Stat(PrevPath(path)); !errors.Is(err, fs.ErrNotExist) {
			t.Fatalf("a first save made a previous checkpoint: %v", err)
		}
		save(t, path, r, 200)
		hurt(path)
		l, err := Load(path)
		if err != nil {
			t.Fatalf("%s: %v", name, err)
		}
		if l.Path != PrevPath(path) || l.Step != 100 || l.Fallback == nil {
			t.Fatalf("%s: loaded step %d from %s (fallback %v), want step 100 from the previous", name, l.Step, l.Path, l.Fallback)
		}
		if w := l.Warning(); !strings.Contains(w, "previous checkpoint "+PrevPath(path)) || !strings.Contains(w, "step 100") {
			t.Fatalf("%s: warning %q", name, w)
		}
		// A save over a damaged checkpoint keeps the good previous one.
		save(t, path, r, 300)
		if l, err := Load(path); err != nil || l.Step != 300 {
			t.Fatalf("%s: after a new save: %v", name, err)
		}
		damage["corrupt"](path)
		if l, err := Load(path); err != nil || l.Step != 100 {
			t.Fatalf("%s: the good previous checkpoint was replaced by a damaged one (%v)", name, err)
		}
	}
}

func TestLoadErrors(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	if _, err := Load(path); !errors.Is(err, fs.ErrNotExist) {
		t.Fatalf("no checkpoint: err = %v, want ErrNotExist", err)
	}
	r := newRun(t, 1)
	save(t, path, r, 1)
	save(t, path, r, 2)
	for _, p := range []string{path, PrevPath(path)} {
		b, _ := os.ReadFile(p)
		os.WriteFile(p, b[:100], 0o644)
	}
	_, err := Load(path)
	if err == nil || !strings.Contains(err.Error(), path) || !strings.Contains(err.Error(), "previous checkpoint is unusable too") {
		t.Fatalf("both damaged: err = %v", err)
	}
}

func TestAbsurdHeaderRejectedBeforeAllocating(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	for _, n := range []uint64{1 << 62, 99e6, 1 << 20} {
		b := binary.LittleEndian.AppendUint64(nil, n)
		os.WriteFile(path, append(b, `{}`...), 0o644)
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Load(path)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Fatalf("header length %d accepted", n)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Fatalf("header length %d: %d bytes allocated before rejecting", n, got)
		}
	}
}

func TestRestoreRejectsMismatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	r := newRun(t, 1)
	save(t, path, r, 1)
	l, err := Load(path)
	if err != nil {
		t.Fatal(err)
	}
	other := func() []*nn.Param { return newRun(t, 2).params }
	tests := []struct {
		name   string
		params []*nn.Param
		opt    optim.Optimizer
		want   string
	}{
		{"missing tensor", append(other(), nn.NewParam("extra", 1)), nil, `no tensor for parameter "extra"`},
		{"extra tensor", other()[:2], nil, `tensor "classifier.weight" that the model does not`},
		{"shape", append(other()[:2], nn.NewParam("classifier.weight", 16, 10)), nil, "Tensor[16×10]"},
	}
	sgd, _ := optim.NewSGD(r.params, optim.SGDConfig{LR: 1, Momentum: 0.9})
	tests = append(tests, struct {
		name   string
		params []*nn.Param
		opt    optim.Optimizer
		want   string
	}{"other optimizer", r.params, sgd, "momentum_buffer"})
	for _, tt := range tests {
		before := make([][]float32, len(tt.params))
		for i, p := range tt.params {
			before[i] = append([]float32(nil), p.Value.Data...)
		}
		err := l.Restore(tt.params, tt.opt)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
		for i, p := range tt.params {
			if !sameBits(before[i], p.Value.Data) {
				t.Errorf("%s: a failed Restore changed %s", tt.name, p.Name)
			}
		}
	}
}

func TestSaveErrorsLeaveFilesAlone(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	r := newRun(t, 1)
	save(t, path, r, 1)
	save(t, path, r, 2)
	dup := append(r.params, nn.NewParam("features.0.bias", 4))
	if err := Save(path, Meta{Step: 3}, dup, nil); err == nil {
		t.Fatal("duplicate parameter names accepted")
	}
	if err := Save(path, Meta{Step: 3}, []*nn.Param{nn.NewParam("optimizer.x", 1)}, nil); err == nil {
		t.Fatal("reserved prefix accepted")
	}
	for p, step := range map[string]int{path: 2, PrevPath(path): 1} {
		l, err := load(p)
		if err != nil || l.Step != step {
			t.Fatalf("%s after failed saves: step %v, err %v; want step %d", p, l, err, step)
		}
	}
	entries, _ := os.ReadDir(filepath.Dir(path))
	if len(entries) != 2 {
		t.Fatalf("files left: %v", entries)
	}
}

// TestSaveRemovesTemporariesOfKilledSaves: a Save killed before its rename
// leaves a temporary as large as the checkpoint; the next Save removes it.
func TestSaveRemovesTemporariesOfKilledSaves(t *testing.T) {
	dir := t.TempDir()
	path := filepath.Join(dir, "ckpt.safetensors")
	r := newRun(t, 1)
	save(t, path, r, 1)
	stale := filepath.Join(dir, ".ckpt.safetensors.tmp2718281828")
	if err := os.WriteFile(stale, make([]byte, 1000), 0o644); err != nil {
		t.Fatal(err)
	}
	save(t, path, r, 2)
	entries, _ := os.ReadDir(dir)
	if len(entries) != 2 {
		t.Fatalf("files left: %v; want the checkpoint and the previous one", entries)
	}
}

func TestConfig(t *testing.T) {
	m := Meta{Config: map[string]string{"lr": "0.1", "epochs": "10", "out": "run1", "mode": `"global"`}}
	if err := m.CheckConfig(map[string]string{"lr": "0.1", "epochs": "20", "out": "run2", "mode": `"global"`}, "epochs", "out"); err != nil {
		t.Fatal(err)
	}
	// Issue 26: values print as they are, a JSON string with its own
	// quotes once, not quoted again.
	err := m.CheckConfig(map[string]string{"lr": "0.2", "epochs": "10", "seed": "1", "mode": `"none"`}, "out")
	want := `lr=0.2 (checkpoint 0.1), mode="none" (checkpoint "global"), seed=1 is not in the checkpoint`
	var ce *ConfigError
	if !errors.As(err, &ce) || !strings.Contains(err.Error(), want) || len(ce.Diffs) != 3 {
		t.Fatalf("err = %v, want a *ConfigError of 3 settings containing %s", err, want)
	}
	if err := m.RestoreRNG("nope", rand.NewPCG(1, 1)); err == nil {
		t.Fatal("missing RNG state accepted")
	}
}

func TestPrevPath(t *testing.T) {
	for in, want := range map[string]string{"run/ckpt.safetensors": "run/ckpt.prev.safetensors", "ckpt": "ckpt.prev"} {
		if got := PrevPath(in); got != want {
			t.Errorf("PrevPath(%q) = %q, want %q", in, got, want)
		}
	}
}

// TestLegacyEpochBatch: checkpoints written when Meta still had Epoch and
// Batch load, their values ignored.
func TestLegacyEpochBatch(t *testing.T) {
	path := filepath.Join(t.TempDir(), "ckpt.safetensors")
	a := newRun(t, 1)
	if err := Save(path, Meta{Step: 3}, a.params, nil); err != nil {
		t.Fatal(err)
	}
	f, err := safetensors.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	f.Metadata[metaKey] = strings.Replace(f.Metadata[metaKey], `"step":3`, `"step":3,"epoch":2,"batch":17`, 1)
	f.Metadata[checksumKey] = digest(f.Tensors, f.Metadata)
	if err := safetensors.WriteFile(path, f.Tensors, f.Metadata); err != nil {
		t.Fatal(err)
	}
	if l, err := Load(path); err != nil || l.Step != 3 || l.Fallback != nil {
		t.Fatalf("legacy checkpoint: %+v, %v", l, err)
	}
}
