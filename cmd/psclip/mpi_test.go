//go:build mpi

package main

// The data-parallel suite: psclip built with -tags mpi, run under
// "mpirun -np 2" as a user would, against one process.

import (
	"bytes"
	"context"
	bin "encoding/binary"
	"errors"
	"math"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"
)

var (
	mpiOnce sync.Once
	mpiPath string
	mpiErr  error
)

// mpiBinary returns the path of psclip built with -tags mpi.
func mpiBinary(t testing.TB) string {
	t.Helper()
	binary(t) // creates suiteDir
	mpiOnce.Do(func() { mpiPath, mpiErr = build("psclip-mpi", []string{"CGO_ENABLED=1"}, "-tags", "mpi") })
	return built(t, mpiPath, mpiErr)
}

// mpirunCmd is the command that runs the MPI build of psclip on np ranks
// with args, or, with several arg lists, one rank per list (an MPMD job:
// "mpirun -np 1 psclip args0 : -np 1 psclip args1").
func mpirunCmd(t testing.TB, ctx context.Context, np int, args ...[]string) *exec.Cmd {
	t.Helper()
	path, err := exec.LookPath("mpirun")
	if err != nil {
		t.Skip("mpirun not found: install openmpi-bin")
	}
	flags := []string{"--oversubscribe"}
	if os.Geteuid() == 0 {
		flags = append(flags, "--allow-run-as-root")
	}
	exe := mpiBinary(t)
	var a []string
	for i, arg := range args {
		if i > 0 {
			a = append(a, ":")
		}
		a = append(append(append(a, "-np", strconv.Itoa(np)), exe), arg...)
	}
	return exec.CommandContext(ctx, path, append(flags, a...)...)
}

// mpirun runs psclip on np ranks (see mpirunCmd) and returns how mpirun
// ended, failing the test if it runs longer than two minutes.
func mpirun(t testing.TB, np int, args ...[]string) result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := mpirunCmd(t, ctx, np, args...)
	var out, errOut bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errOut
	err := cmd.Run()
	if ctx.Err() != nil {
		t.Fatalf("%s: still running after two minutes\n%s", cmd, errOut.String())
	}
	var exit *exec.ExitError
	if err != nil && !errors.As(err, &exit) {
		t.Fatalf("%s: %v", cmd, err)
	}
	return result{code: cmd.ProcessState.ExitCode(), stdout: out.String(), stderr: errOut.String()}
}

// mustMPIRun runs psclip args on np ranks and fails the test unless the job
// exits 0.
func mustMPIRun(t testing.TB, np int, args ...string) {
	t.Helper()
	if r := mpirun(t, np, args); r.code != 0 {
		t.Fatalf("mpirun -np %d psclip %s: exit %d\n%s", np, strings.Join(args, " "), r.code, r.stderr)
	}
}

// closeTensors fails the test unless the safetensors files a and b hold the
// same float32 tensors within relative tolerance tol (of each tensor's
// largest value).
func closeTensors(t *testing.T, a, b string, tol float64) {
	t.Helper()
	ta, tb := tensorsOf(t, a), tensorsOf(t, b)
	if len(ta) == 0 || len(ta) != len(tb) {
		t.Fatalf("%s holds %d tensors, %s %d", a, len(ta), b, len(tb))
	}
	for name, x := range ta {
		y := tb[name]
		if len(x) != len(y) {
			t.Fatalf("tensor %s: %d bytes in %s, %d in %s", name, len(x), a, len(y), b)
		}
		var diff, size float64
		for i := 0; i+4 <= len(x); i += 4 {
			u := float64(math.Float32frombits(bin.LittleEndian.Uint32(x[i:])))
			v := float64(math.Float32frombits(bin.LittleEndian.Uint32(y[i:])))
			diff, size = max(diff, math.Abs(u-v)), max(size, math.Abs(u))
		}
		if diff > tol*size {
			t.Errorf("tensor %s: max difference %.3g between %s and %s, over %.1g of its largest value %.3g", name, diff, a, b, tol, size)
		}
	}
}

// gptTiny and cifarTiny are data-parallel training runs of a few seconds:
// dropout, and micro-batches that 2 ranks share.
func gptTiny(t *testing.T, mode string) []string {
	args := []string{"train", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "32", "--n-head", "2",
		"--block-size", "32", "--micro-batch", "4", "--accum", "3", "--steps", "40", "--warmup", "5", "--lr", "3e-3",
		"--dropout", "0.1", "--clip-mode", mode, "--eval-interval", "20", "--eval-iters", "2", "--ckpt-interval", "5"}
	if mode != "none" {
		args = append(args, "--clip", "0.5")
	}
	return args
}

func cifarTiny(t *testing.T, est string) []string {
	return []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "64", "--accum", "3",
		"--epochs", "2", "--lr", "0.05", "--augment", "cropflip", "--dropout", "0.5", "--estimator", est, "--clip", "1"}
}

// Two ranks train the weights of one process up to float32 summation order,
// for every clip mode of the GPT and global and per-sample clipping of
// AlexNet; two runs on two ranks are bit-identical, and the log's header
// records the ranks.
func TestMPITrainMatchesOneProcess(t *testing.T) {
	var runs [][]string
	for _, mode := range []string{"global", "micro-batch", "per-sample"} {
		runs = append(runs, gptTiny(t, mode))
	}
	for _, est := range []string{"clip-sgd", "ps-clip-sgd"} {
		runs = append(runs, cifarTiny(t, est))
	}
	for _, args := range runs {
		name := strings.Join(args[:2], " ") + " " + args[len(args)-3]
		one, two, again := t.TempDir(), t.TempDir(), t.TempDir()
		mustRun(t, nil, append(args, "--out", one)...)
		mustMPIRun(t, 2, append(args, "--out", two)...)
		mustMPIRun(t, 2, append(args, "--out", again)...)
		sameTensors(t, filepath.Join(two, ckptName), filepath.Join(again, ckptName))
		closeTensors(t, filepath.Join(one, ckptName), filepath.Join(two, ckptName), 1e-5)
		result, err := os.ReadFile(filepath.Join(two, "result.json"))
		if err != nil || !bytes.Contains(result, []byte(`"ranks": 2`)) {
			t.Errorf("%s: result.json does not record 2 ranks (%v):\n%s", name, err, result)
		}
		if args[1] == "gpt" {
			if header := logRecords(t, filepath.Join(two, "log.jsonl"))[0]; header["ranks"] != 2.0 {
				t.Errorf("%s: log header %v, want \"ranks\": 2", name, header)
			}
		}
	}
}

// A rank killed mid-run ends the job; --resume on two ranks then finishes
// with the weights and log of an uninterrupted run, bit for bit, and a
// resume in one process with its weights up to summation order. Ctrl-C on
// mpirun stops both ranks after the same step with a checkpoint, each
// saying so, and --resume finishes the uninterrupted run too.
func TestMPIKillResume(t *testing.T) {
	args := gptTiny(t, "per-sample")
	// Seconds even where a step takes 1.4 ms (an idle 2-core Xeon), so that
	// a signal sent a quarter of the way in lands mid-run. With 1500 steps
	// and the signal at half way, the ranks there often finished every step
	// before mpirun's Ctrl-C reached them (7 runs of 9 failed).
	args[slices.Index(args, "--steps")+1] = "4000"
	ref := t.TempDir()
	mustMPIRun(t, 2, append(args, "--out", ref)...)
	lines := lineCount(filepath.Join(ref, "log.jsonl"))
	for _, tc := range []struct {
		name        string
		interrupt   bool // SIGINT to mpirun, instead of SIGKILL to rank 1
		resumeRanks int
	}{{"rank 1 killed", false, 2}, {"rank 1 killed, resumed in one process", false, 1}, {"Ctrl-C", true, 2}} {
		dir := t.TempDir()
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
		cmd := mpirunCmd(t, ctx, 2, append(args, "--out", dir))
		var errOut bytes.Buffer
		cmd.Stderr = &errOut
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		for lineCount(filepath.Join(dir, "log.jsonl")) < lines/4 && ctx.Err() == nil {
			time.Sleep(5 * time.Millisecond)
		}
		stopped := false
		if tc.interrupt {
			stopped = cmd.Process.Signal(os.Interrupt) == nil
		} else {
			stopped = killRank(t, mpiBinary(t), 1)
		}
		err := cmd.Wait()
		cancel()
		if !stopped || err == nil {
			t.Fatalf("%s: stopped %v, mpirun ended with %v, want a failure\n%s", tc.name, stopped, err, errOut.String())
		}
		if want := "psclip train gpt: interrupted; checkpoint saved; rerun with --resume to continue\n"; tc.interrupt && strings.Count(errOut.String(), want) != 2 {
			t.Errorf("%s: want both ranks to say %q:\n%s", tc.name, want, errOut.String())
		}
		if !hasCheckpoint(dir) {
			t.Fatalf("%s: no checkpoint", tc.name)
		}
		if tc.resumeRanks == 2 {
			mustMPIRun(t, 2, append(args, "--out", dir, "--resume")...)
			sameTensors(t, filepath.Join(ref, ckptName), filepath.Join(dir, ckptName))
			sameLog(t, filepath.Join(ref, "log.jsonl"), filepath.Join(dir, "log.jsonl"))
		} else {
			mustRun(t, nil, append(args, "--out", dir, "--resume")...)
			closeTensors(t, filepath.Join(ref, ckptName), filepath.Join(dir, ckptName), 1e-5)
		}
	}
}

// killRank kills with SIGKILL the process of the executable exe that is
// rank of an MPI job (its environment says OMPI_COMM_WORLD_RANK), and
// reports whether it found one.
func killRank(t *testing.T, exe string, rank int) bool {
	t.Helper()
	procs, _ := filepath.Glob("/proc/[0-9]*")
	for _, p := range procs {
		path, err := os.Readlink(filepath.Join(p, "exe"))
		if err != nil || path != exe {
			continue
		}
		env, err := os.ReadFile(filepath.Join(p, "environ"))
		if err != nil || !bytes.Contains(env, []byte("\x00OMPI_COMM_WORLD_RANK="+strconv.Itoa(rank)+"\x00")) {
			continue
		}
		pid, err := strconv.Atoi(filepath.Base(p))
		return err == nil && syscall.Kill(pid, syscall.SIGKILL) == nil
	}
	return false
}

// Bad input that only one rank sees ends every rank with the same one-line
// message and exit status, before anything is written: a corpus missing on
// rank 1, another corpus on rank 1, other flags on rank 1.
func TestMPIBadInputOnOneRank(t *testing.T) {
	args := gptTiny(t, "global")
	text := slices.Index(args, "--text") + 1
	other := filepath.Join(t.TempDir(), "other.txt")
	if err := os.WriteFile(other, []byte(strings.Repeat("Another corpus, of other words.\n", 800)), 0o644); err != nil {
		t.Fatal(err)
	}
	with := func(i int, v string) []string {
		a := append([]string{}, args...)
		a[i] = v
		return a
	}
	for _, tc := range []struct {
		name   string
		rank1  []string
		code   int
		suffix string
	}{
		{"missing corpus", with(text, filepath.Join(t.TempDir(), "missing.txt")), 2, "missing.txt: no such file or directory (see 'psclip train gpt -h')"},
		{"other corpus", with(text, other), 2, "rank 1: the data differs from rank 0's (see 'psclip train gpt -h')"},
		{"other flags", with(slices.Index(args, "--steps")+1, "41"), 2, "rank 1: the configuration differs from rank 0's (see 'psclip train gpt -h')"},
	} {
		dir := t.TempDir()
		r := mpirun(t, 1, append(args, "--out", dir), append(tc.rank1, "--out", dir))
		var lines []string
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(l, "psclip ") {
				lines = append(lines, l)
			}
		}
		if r.code != tc.code || len(lines) != 2 || lines[0] != lines[1] || !strings.HasSuffix(lines[0], tc.suffix) {
			t.Errorf("%s: exit %d, psclip's lines %q; want %d and the same line ending in %q from both ranks\n%s", tc.name, r.code, lines, tc.code, tc.suffix, r.stderr)
		}
		if entries := dirEntries(t, dir); len(entries) > 0 {
			t.Errorf("%s: the run directory holds %v, want nothing written, not even a lock file", tc.name, entries)
		}
	}
}

// Issue 26: ranks that disagree on how they use the run directory are
// refused on every rank alike before anything is written: a resume on
// rank 0 only of a finished run (which once trained on with the ranks in
// different states, overwrote the checkpoint and log, and panicked), a
// resume against a restart, another --out on rank 1. The directories are
// left byte for byte as they were, no lock file added.
func TestMPIRanksDisagree(t *testing.T) {
	args := gptTiny(t, "global")
	done := t.TempDir()
	mustRun(t, nil, append(args, "--out", done)...)
	for _, tc := range []struct {
		name         string
		rank0, rank1 []string
		suffix       string
	}{
		{"--resume on rank 0 only", []string{"--out", done, "--resume"}, []string{"--out", done}, "rank 1: the start (fresh, resumed or restarted) differs from rank 0's"},
		{"--resume against --restart", []string{"--out", done, "--resume"}, []string{"--out", done, "--restart"}, "rank 1: the start (fresh, resumed or restarted) differs from rank 0's"},
		{"another --out on rank 1", []string{"--out", filepath.Join(t.TempDir(), "a")}, []string{"--out", filepath.Join(t.TempDir(), "b")}, "rank 1: the output directory differs from rank 0's"},
	} {
		dirs := []string{tc.rank0[1], tc.rank1[1]}
		var before [][]string
		for _, d := range dirs {
			before = append(before, snapshotIf(t, d))
		}
		r := mpirun(t, 1, append(slices.Clone(args), tc.rank0...), append(slices.Clone(args), tc.rank1...))
		var lines []string
		for _, l := range strings.Split(r.stderr, "\n") {
			if strings.HasPrefix(l, "psclip ") {
				lines = append(lines, l)
			}
		}
		if r.code != 2 || len(lines) != 2 || lines[0] != lines[1] || !strings.Contains(lines[0], tc.suffix) {
			t.Errorf("%s: exit %d, psclip's lines %q; want 2 and the same line with %q from both ranks\n%s", tc.name, r.code, lines, tc.suffix, r.stderr)
		}
		for i, d := range dirs {
			if after := snapshotIf(t, d); !slices.Equal(before[i], after) {
				t.Errorf("%s: %s changed: %v, then %v", tc.name, d, before[i], after)
			}
		}
	}
}

// Issue 26: bench step's ranks time the same steps in step, so a rank with
// other flags is refused on every rank alike, and so are fewer
// micro-batches than ranks (bad input, exit 2).
func TestMPIBenchStepFlagsDiffer(t *testing.T) {
	args := []string{"bench", "step", "--width-div", "16", "--batch", "4", "--accum", "2", "--steps", "1", "--warmup", "0", "--estimators", "sgd"}
	other := slices.Clone(args)
	other[slices.Index(other, "--batch")+1] = "8"
	for _, tc := range []struct {
		name string
		r    result
		want string
	}{
		{"other flags", mpirun(t, 1, args, other), "psclip bench step: rank 1: the command line differs from rank 0's (see 'psclip bench step -h')"},
		{"--accum 1", mpirun(t, 2, append(slices.Clone(args), "--accum", "1")), "psclip bench step: --accum 1: 2 ranks share a step's micro-batches, so it needs at least 2 (see 'psclip bench step -h')"},
	} {
		if tc.r.code != 2 || strings.Count(tc.r.stderr, tc.want) != 2 {
			t.Errorf("%s: exit %d, want 2 and %q from both ranks:\n%s", tc.name, tc.r.code, tc.want, tc.r.stderr)
		}
	}
	if r := mpirun(t, 2, args); r.code != 0 {
		t.Errorf("the same flags on both ranks: exit %d\n%s", r.code, r.stderr)
	}
}

// snapshotIf is snapshot of dir, or nil if it does not exist.
func snapshotIf(t *testing.T, dir string) []string {
	if _, err := os.Stat(dir); err != nil {
		return nil
	}
	return snapshot(t, dir)
}

// A command that does not run on ranks refuses to, and so does a training
// run with fewer micro-batches a step than ranks, on every rank alike.
func TestMPICommandWithoutRanks(t *testing.T) {
	gpt := gptTiny(t, "global")
	gpt[slices.Index(gpt, "--accum")+1] = "1"
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"quadratic"}, "psclip quadratic: runs in one process, not on the 2 ranks of an MPI job (start it without mpirun)\n"},
		{gpt, "psclip train gpt: --accum 1: 2 ranks share a step's micro-batches, so it needs at least 2 (see 'psclip train gpt -h')\n"},
	} {
		r := mpirun(t, 2, append(tc.args, "--out", t.TempDir()))
		if r.code != 2 || strings.Count(r.stderr, tc.want) != 2 {
			t.Errorf("exit %d, want 2 and %q from both ranks:\n%s", r.code, tc.want, r.stderr)
		}
	}
}

// A dp-sgd run on two ranks adds one process's noise, once (rank 0 draws
// it from the fixed seed into its share of the step's sum): with Poisson
// samples in one micro-batch each (--micro-batch 256: rank 1 computes it,
// rank 0 adds only the noise), the two ranks train one process's weights
// bit for bit. With micro-batches of at most 16, which the ranks share,
// they train them up to float32 summation order; two such runs are
// bit-identical, and every run reports the same ε.
func TestMPIDPSGDMatchesOneProcess(t *testing.T) {
	args := []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "64", "--micro-batch", "16",
		"--epochs", "2", "--lr", "0.05", "--augment", "cropflip", "--dropout", "0.5", "--noise-multiplier", "1", "--noise-seed", "3",
		"--delta", "1e-3", "--estimator", "dp-sgd", "--clip", "1"}
	whole := slices.Clone(args)
	whole[slices.Index(whole, "--micro-batch")+1] = "256"
	one, two, again, wholeOne, wholeTwo := t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir(), t.TempDir()
	mustRun(t, nil, append(args, "--out", one)...)
	mustMPIRun(t, 2, append(args, "--out", two)...)
	mustMPIRun(t, 2, append(args, "--out", again)...)
	mustRun(t, nil, append(whole, "--out", wholeOne)...)
	mustMPIRun(t, 2, append(whole, "--out", wholeTwo)...)
	sameTensors(t, filepath.Join(wholeOne, ckptName), filepath.Join(wholeTwo, ckptName))
	sameTensors(t, filepath.Join(two, ckptName), filepath.Join(again, ckptName))
	// Shared micro-batches round the step's sum otherwise than one
	// process does. Rounding alone leaves at most 5e-7 of a tensor's
	// largest value after the 10 steps (57 of 60 noise seeds). Where a
	// ReLU's input lies within rounding of 0 it can switch, and with it a
	// sample's gradient: noise seed 3's 10th step has one (the 4th
	// convolution, sample 10: 2⁻²⁷ on two ranks, 0 in one process), which
	// leaves 2e-5 in the weights and 8e-4 in the momentum buffers. The
	// noise is the same bits in both (compared step by step), and the
	// polar noise before the ziggurat switched such units as often (3 of
	// 60 seeds with the ziggurat, 2 of 60 with the polar noise, whose seed
	// 12 left 3e-5 and 4e-4). Errors are far larger: without rank 1's
	// share the weights differ by 0.35 of their largest value, with the
	// noise on both ranks or on none by 0.54. The tolerance lies between,
	// 13 times the largest switch measured and 35 times below an error.
	closeTensors(t, filepath.Join(one, ckptName), filepath.Join(two, ckptName), 1e-2)
	var eps []string
	for _, dir := range []string{one, two, wholeOne, wholeTwo} {
		b, err := os.ReadFile(filepath.Join(dir, "result.json"))
		i := bytes.Index(b, []byte(`"epsilon"`))
		if err != nil || i < 0 {
			t.Fatalf("%s/result.json has no ε (%v):\n%s", dir, err, b)
		}
		eps = append(eps, string(b[i:i+bytes.IndexByte(b[i:], ',')]))
	}
	for _, e := range eps[1:] {
		if e != eps[0] {
			t.Errorf("one process reports %s, a run on two ranks %s", eps[0], e)
		}
	}
}

// A private dp-sgd run on two ranks (keys from crypto/rand; rank 0's
// sampling key sent to rank 1 over the communicator) trains and writes
// only what ε covers, and says "private": true; the ranks' sharing of the
// key is TestRanksShareTheSecret's (experiments/images), on in-memory
// ranks.
func TestMPIDPSGDPrivate(t *testing.T) {
	args := []string{"train", "cifar", "--data", cifarData(t), "--width-div", "32", "--batch", "64", "--micro-batch", "16",
		"--epochs", "1", "--lr", "0.05", "--augment", "cropflip", "--noise-multiplier", "1", "--delta", "1e-3",
		"--estimator", "dp-sgd", "--clip", "1"}
	out := filepath.Join(t.TempDir(), "run")
	r := mpirun(t, 2, append(args, "--out", out))
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
	scanRelease(t, out, r.stdout, r.stderr)
}
