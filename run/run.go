package run

import (
	"bytes"
	"context"
	"encoding"
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"math"
	"path/filepath"
	"time"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/dist"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/isnil"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/internal/normlog"
	"github.com/psclip/psclip/internal/stats"
	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/optim"
	"github.com/psclip/psclip/provenance"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/train"
)

// Float is a float64 that JSON-encodes NaN and ±Inf as null (and decodes
// null as NaN), so that a diverged run still writes valid JSON.
type Float = stats.Float

// RNG is a random stream a checkpoint saves and restores, such as a
// *rand.PCG.
type RNG interface {
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Spec is what a trainer tells the run layer about itself: what a
// checkpoint holds, what a resume checks, and how the loop reports. The
// objects it names are the trainer's; the run layer saves and restores
// them in place.
type Spec struct {
	// Kind names the trainer ("cifar", "gpt"): a checkpoint records it, and
	// a trainer reading a checkpoint of another kind gets a *KindError.
	Kind string
	// Config is the trainer's configuration, a struct that marshals to a
	// JSON object (see ConfigMap). A resume refuses a configuration that
	// differs from the checkpoint's in anything but MayDiffer, the JSON
	// names of the settings a resumed run may change.
	Config    any
	MayDiffer []string
	// Data is the identity of the training data (a resume refuses other
	// data).
	Data Data
	// Steps is the number of optimizer steps of the whole run.
	Steps int
	// Params, Optimizer and Estimator are the model's parameters, the
	// optimizer and the configured estimator, whose state (if it is
	// adaptive) a checkpoint keeps.
	Params    []*nn.Param
	Optimizer optim.Optimizer
	Estimator estimator.Estimator
	// RNGs are the trainer's random streams by name (dropout, data order).
	RNGs map[string]RNG
	// State points to the trainer's own progress, a struct that marshals to
	// JSON: saved with every checkpoint and set from it on resume.
	State any
	// Extra is saved in checkpoints as it is (checkpoint.Meta.Extra), for
	// readers of the checkpoint such as a model loader (a vocabulary).
	Extra map[string]string
	// Privacy, for a dp-sgd run, is its secret and what may make it not
	// private; the run then writes only what Released declares (see
	// Privacy). nil for the other estimators.
	Privacy *Privacy
	// MaxBadSteps stops the run after that many consecutive steps without
	// an update, or whose every sample was non-finite (0: never).
	MaxBadSteps int
	// ItemsPerStep and ItemUnit give the progress lines a throughput, such
	// as "812 img/s".
	ItemsPerStep int
	ItemUnit     string
}

// Trainer is where a trainer plugs into the run layer: the parts of a run
// that are its own. Run.Train calls Begin once, then Step and After for
// every step, checkpointing when After asks, on interrupt (after the step
// in flight) and at the end.
type Trainer interface {
	// Begin starts a session. kept holds the log lines of the earlier
	// sessions of a resumed run, up to its checkpoint, from which the
	// trainer rebuilds its curves; nil for a fresh run.
	Begin(kept [][]byte) error
	// Step performs optimizer step i (0-based).
	Step(i int) (train.Stats, error)
	// After follows every step that did not fail, with the number of
	// steps done: it evaluates and logs as the trainer's schedule says, and
	// reports whether to write a checkpoint now.
	After(done int) (checkpoint bool, err error)
	// Describe is the trainer's part of a progress line (loss, epoch).
	Describe(done int) string
}

// Summary is what every finished run reports, embedded in a trainer's
// summary.
type Summary struct {
	// Seconds is the run's wall time, evaluations included, summed over
	// resumed sessions.
	Seconds float64 `json:"train_time_s"`
	// SkippedSteps made no update because every gradient was non-finite.
	SkippedSteps int `json:"skipped_steps"`
	// Data is the identity of the data the run trained on.
	Data Data `json:"data"`
	// Ranks is the number of processes of its last session (Options.Comm).
	Ranks int `json:"ranks"`
	// Provenance is where and how the run's last session trained (package
	// provenance: the command, the binary's commit, the CPU, the kernel,
	// the threads and the load from the session's start to its summary).
	Provenance provenance.Record `json:"provenance,omitzero"`
}

// Diagnostics are an adaptive estimator's state after a step, for the log:
// PHat and SigmaHat are the automatic threshold's tail estimates (Hill's p̂
// over its window of recent per-sample norms, clamped to [1.05, 2] or the
// fixed β, and σ̂, their moment of order β, which is α when α is
// automatic), null for the other estimators and during the warm-up; Gamma
// is ps-clip-quantile's threshold, null for the other estimators; ClipNorm
// is adaptive dp-sgd's clipping norm (moved only by noised counts, so
// private), absent for the other estimators.
type Diagnostics struct {
	PHat     Float  `json:"p_hat"`
	SigmaHat Float  `json:"sigma_hat"`
	Gamma    Float  `json:"gamma"`
	ClipNorm *Float `json:"clip_norm,omitempty"`
}

// Checkpoint metadata keys: the run layer's state and the trainer's.
const (
	extraRun     = "run"
	extraTrainer = "state"
)

// state is the run layer's part of a checkpoint.
type state struct {
	Kind         string  `json:"kind"`
	Seconds      float64 `json:"seconds"` // wall time of the sessions so far
	SkippedSteps int     `json:"skipped_steps"`
	Data         Data    `json:"data"`
	logPos
	// Estimator is an adaptive estimator's state (its MarshalBinary).
	Estimator []byte `json:"estimator,omitempty"`
}

// Run is one training run's harness: its directory, log, checkpoints and
// loop. A Run trains once.
type Run struct {
	spec  Spec
	opts  Options
	dir   *Dir                // nil without an output directory, or ReadOnly
	est   estimator.Estimator // what the trainer's train.Trainer uses
	data  Data                // the data's identity as the run records it
	norms *normlog.Recorder   // with LogNorms

	st      state
	step    int // steps done
	saved   int // the step of the latest checkpoint
	resumed bool
	kept    []byte   // the log of the earlier sessions (resume)
	lines   [][]byte // kept, by line
	log     *logFile
	start   time.Time
	prov    provenance.Record // of the session, from Train's start
}

// New sets up the harness of a run: it checks the estimator against
// opts.LogNorms, opens (creates, checks and locks) the run directory and,
// with opts.Resume, restores the checkpoint into the objects spec names,
// after checking that the checkpoint, its configuration, its data and its
// log belong together. Nothing is written before Train; a Run that will not
// train must be closed.
//
// With Options.Comm every rank of the job calls New alike: they first
// check that they run the same run (the data, the configuration, the run
// directory and whether it is resumed, restarted or logs norms: all of
// them as rank 0's), before anything is written, so that a refusal leaves
// nothing behind; then rank 0 opens the directory, the others read it as
// with ReadOnly, and all of them return the same error if any failed
// (dist.AgreeError).
func New(spec Spec, opts Options) (*Run, error) {
	if isnil.IsNil(opts.Comm) {
		opts.Comm = dist.Local{}
	}
	if opts.Kind == "" {
		opts.Kind = spec.Kind + " run"
	}
	if err := sameOnRanks(opts.Comm, spec, opts); err != nil {
		return nil, err
	}
	if opts.Comm.Rank() != 0 {
		opts.ReadOnly, opts.Progress = true, nil
	}
	if spec.Privacy != nil {
		// Every rank draws rank 0's Poisson samples; the key travels
		// over the communicator, never through a file.
		spec.Privacy.Secret.Share(opts.Comm)
	}
	r, err := open(spec, opts)
	if err = dist.AgreeError(opts.Comm, err); err != nil {
		if r != nil {
			r.Close()
		}
		return nil, err
	}
	if spec.Privacy != nil && opts.Progress != nil {
		fmt.Fprintln(opts.Progress, spec.Privacy.note())
	}
	return r, nil
}

// sameOnRanks checks that every rank trains on the same data (its content:
// the source may lie elsewhere) with the same configuration as rank 0, into
// the same run directory used alike: every setting that shapes the run.
func sameOnRanks(c dist.Comm, spec Spec, opts Options) error {
	if c.Size() == 1 {
		return nil
	}
	data := spec.Data
	data.Source = ""
	b, err := json.Marshal(data)
	if err != nil {
		return err
	}
	if err := dist.Same(c, "the data", b); err != nil {
		return err
	}
	if b, err = json.Marshal(ConfigMap(spec.Config)); err != nil {
		return err
	}
	if err := dist.Same(c, "the configuration", b); err != nil {
		return err
	}
	out := opts.Out
	if out != "" {
		out = filepath.Clean(out)
	}
	for _, s := range []struct {
		what string
		v    any
	}{
		{"the output directory", out},
		{"the start (fresh, resumed or restarted)", [2]bool{opts.Resume, opts.Restart}},
		{"the logging of per-sample norms", opts.LogNorms},
	} {
		if b, err = json.Marshal(s.v); err != nil {
			return err
		}
		if err := dist.Same(c, s.what, b); err != nil {
			return err
		}
	}
	return nil
}

// open is New on one rank.
func open(spec Spec, opts Options) (*Run, error) {
	r := &Run{spec: spec, opts: opts, est: spec.Estimator}
	if estimator.NoisyOf(spec.Estimator) != nil && spec.Privacy == nil {
		// A trainer that forgot its Privacy would write everything.
		return nil, errors.New("run: an estimator that adds noise (dp-sgd) needs Spec.Privacy")
	}
	if opts.LogNorms && spec.Privacy != nil && !spec.Privacy.ReleaseUnprotected {
		return nil, setting.Errorf("LogNorms", true, "false for %s: per-sample norms are statistics of the private records that ε does not cover (release them with ReleaseUnprotected, and the run is not private)", spec.Estimator.Name())
	}
	if opts.LogNorms {
		if !spec.Estimator.PerSample() {
			return nil, setting.Errorf("LogNorms", true, "false: %s computes no per-sample gradient norms", spec.Estimator.Name())
		}
		r.norms = &normlog.Recorder{Estimator: spec.Estimator}
		r.est = r.norms
	}
	r.data = spec.Data
	if spec.Privacy != nil && !spec.Privacy.ReleaseUnprotected {
		r.data = spec.Data.released()
	}
	r.st = state{Kind: spec.Kind, Data: r.data}
	if opts.Out == "" {
		if opts.Resume {
			return nil, errors.New("run: Resume needs an output directory")
		}
		return r, nil
	}
	if !opts.ReadOnly {
		var err error
		if r.dir, err = OpenDir(opts, runFiles...); err != nil {
			return nil, err
		}
	}
	if opts.Resume {
		if err := r.restore(); err != nil {
			r.Close()
			return nil, err
		}
	}
	return r, nil
}

// Estimator is the estimator the trainer's train.Trainer must use: the
// configured one, wrapped to record the per-sample norms with LogNorms.
func (r *Run) Estimator() estimator.Estimator { return r.est }

// Done is the number of steps done: the checkpoint's step after a resume.
func (r *Run) Done() int { return r.step }

// Resumed reports whether the run continues an earlier session.
func (r *Run) Resumed() bool { return r.resumed }

// Elapsed is the run's wall time so far, over all its sessions.
func (r *Run) Elapsed() float64 {
	if r.start.IsZero() {
		return r.st.Seconds
	}
	return r.st.Seconds + time.Since(r.start).Seconds()
}

// Log appends rec to the run's log as one JSON line; without an output
// directory it does nothing. A dp-sgd run logs only what its Privacy
// releases, and no line of which nothing may be released.
func (r *Run) Log(rec any) error {
	if r.log == nil {
		return nil
	}
	b, err := r.released(rec, false)
	if err != nil || isEmptyObject(b) {
		return err
	}
	return r.log.write(b)
}

// released is the JSON of v as the run may write it: everything, or for a
// dp-sgd run what its Privacy releases, with the privacy keys first when
// head.
func (r *Run) released(v any, head bool) ([]byte, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	return r.spec.Privacy.releaseObject(b, head)
}

// WriteJSON writes v into the file name of the run directory (atomically),
// as Log writes a record: for a dp-sgd run only what its Privacy
// releases, and no file of which nothing may be released. Without an
// output directory, or on a rank that does not write, it does nothing.
func (r *Run) WriteJSON(name string, v any) error {
	if r.dir == nil {
		return nil
	}
	b, err := r.released(v, false)
	if err != nil || isEmptyObject(b) {
		return err
	}
	return atomicfile.WriteFile(filepath.Join(r.dir.Path, name), append(b, '\n'))
}

// Norms returns the per-sample gradient norms the estimator saw since the
// last call (every micro-batch's, in order), with Options.LogNorms; nil
// without. The slice is valid until the next step.
func (r *Run) Norms() []Float {
	if r.norms == nil {
		return nil
	}
	return r.norms.Take()
}

// Diagnostics returns the adaptive estimator's state now.
func (r *Run) Diagnostics() Diagnostics {
	d := Diagnostics{PHat: Float(math.NaN()), SigmaHat: Float(math.NaN()), Gamma: Float(math.NaN())}
	switch est := r.spec.Estimator.(type) {
	case *estimator.PSAuto:
		if te, ok := est.Estimate(); ok {
			d.PHat, d.SigmaHat = Float(te.P), Float(te.Sigma)
		}
	case *estimator.Quantile:
		d.Gamma = Float(est.Gamma())
	case *estimator.DPQuantile:
		c := Float(est.Gamma())
		d.ClipNorm = &c
	}
	return d
}

// Summary is the run's part of its summary, so far.
func (r *Run) Summary() Summary {
	s := Summary{Seconds: r.Elapsed(), SkippedSteps: r.st.SkippedSteps, Data: r.data, Ranks: r.opts.Comm.Size()}
	if !r.start.IsZero() {
		s.Provenance = r.prov
		s.Provenance.Finish()
	}
	return s
}

// Train runs the remaining steps of the run with t, checkpointing when t
// asks, on interrupt and at the end. When ctx is cancelled (Ctrl-C) it
// writes a checkpoint after the step in flight and returns an error
// wrapping loop.ErrInterrupted. The trainer then writes its result with
// Finish; on error the run directory is released at once.
//
// With Options.Comm every rank calls Train. The ranks agree after every
// step on whether any of them failed (rank 0 alone writes, so its errors
// are its own) or was interrupted, and stop after the same step.
func (r *Run) Train(ctx context.Context, t Trainer) (err error) {
	defer func() {
		if err != nil {
			r.Close()
		}
	}()
	r.start, r.prov = time.Now(), provenance.New()
	if err := r.agree(r.openLog()); err != nil {
		return err
	}
	lines := r.lines
	r.kept, r.lines = nil, nil
	if len(lines) > 0 && isPrivacyRecord(lines[0]) {
		lines = lines[1:] // the run layer's, not the trainer's
	}
	if err := r.agree(t.Begin(lines)); err != nil {
		return err
	}
	// stopped is ctx for one process; for several ranks, it is cancelled
	// once they agree that one of them was interrupted.
	stopped, stop := ctx, context.CancelFunc(func() {})
	if r.opts.Comm.Size() > 1 {
		stopped, stop = context.WithCancel(context.Background())
		defer stop()
	}
	l := loop.Loop{
		Total: r.spec.Steps,
		Step: func(_ context.Context, i int) (bool, error) {
			st, err := t.Step(i)
			if err = r.agree(err); err != nil {
				return false, err
			}
			if st.Skipped {
				r.st.SkippedSteps++
			}
			// A step whose every sample was non-finite is bad too: under
			// DP it still made an update (the noise alone), and a run
			// whose model diverged (an absurd noise multiplier, say)
			// stops rather than train noise.
			return st.Skipped || st.AllDropped, nil
		},
		After: func(done int) error {
			r.step = done
			if r.opts.AfterStep != nil {
				r.opts.AfterStep(done)
			}
			save, err := t.After(done)
			if err == nil && save {
				err = r.save()
			}
			if err = r.agree(err); err != nil {
				return err
			}
			if r.opts.Comm.Size() > 1 && dist.AgreeError(r.opts.Comm, ctx.Err()) != nil {
				stop()
			}
			return nil
		},
		Save: func(done int) error {
			r.step = done
			return r.save()
		},
		MaxBadSteps:  r.spec.MaxBadSteps,
		Progress:     r.opts.Progress,
		Label:        r.opts.Label,
		ItemsPerStep: r.spec.ItemsPerStep,
		ItemUnit:     r.spec.ItemUnit,
		Describe:     t.Describe,
	}
	if p := r.spec.Privacy; p != nil && !p.ReleaseUnprotected {
		l.Describe = nil // the trainer's loss and accuracy are the private records'
	}
	if err := l.Run(stopped, r.step); err != nil {
		return err
	}
	if r.saved != r.step {
		return r.agree(r.save())
	}
	return nil
}

// openLog starts the session's log, on the rank that writes.
func (r *Run) openLog() error {
	if r.dir == nil {
		return nil
	}
	if r.opts.Restart {
		if err := r.dir.Remove(runFiles...); err != nil {
			return err
		}
	}
	var err error
	if r.log, err = createLog(filepath.Join(r.dir.Path, LogFile), r.kept); err != nil {
		return err
	}
	if r.spec.Privacy != nil && len(r.kept) == 0 {
		return r.log.write(r.spec.Privacy.Record())
	}
	return nil
}

// isPrivacyRecord reports whether a log line is the PrivacyRecord that
// opens a dp-sgd run's log.
func isPrivacyRecord(line []byte) bool {
	var rec struct {
		Private *bool `json:"private"`
	}
	return json.Unmarshal(line, &rec) == nil && rec.Private != nil
}

// agree is err, agreed on by the ranks of a data-parallel run
// (dist.AgreeError): the same error on every rank if any failed.
func (r *Run) agree(err error) error { return dist.AgreeError(r.opts.Comm, err) }

// Comm is the job the run trains on, Options.Comm (dist.Local for one
// process), for the trainer's train.Trainer.
func (r *Run) Comm() dist.Comm { return r.opts.Comm }

// Privacy is Spec.Privacy: nil for a run without dp-sgd.
func (r *Run) Privacy() *Privacy { return r.spec.Privacy }

// Finish writes result, the trainer's summary of the finished run, to
// ResultFile (atomically) and releases the run directory. Without an output
// directory it does nothing.
func (r *Run) Finish(result any) error {
	defer r.Close()
	return r.agree(r.writeResult(result))
}

// writeResult writes result.json, on the rank that writes.
func (r *Run) writeResult(result any) error {
	if r.dir == nil {
		return nil
	}
	b, err := r.released(result, true)
	if err != nil {
		return err
	}
	var indented bytes.Buffer
	if err := json.Indent(&indented, b, "", "  "); err != nil {
		return err
	}
	b = indented.Bytes()
	return atomicfile.WriteFile(filepath.Join(r.dir.Path, ResultFile), append(b, '\n'))
}

// Close releases the run directory; Finish does so too. It may be called
// more than once.
func (r *Run) Close() error {
	var err error
	if r.log != nil {
		err = r.log.close()
		r.log = nil
	}
	return errors.Join(err, r.dir.Close())
}

func (r *Run) ckptPath() string { return filepath.Join(r.opts.Out, CheckpointFile) }

// save writes the checkpoint after r.step steps: the tensors, the run
// layer's state, the trainer's state and random streams. The log is
// synced first, so that the lines the checkpoint counts are on disk.
func (r *Run) save() error {
	if r.dir == nil {
		r.saved = r.step // as on the rank that writes: ranks decide alike
		return nil
	}
	if err := r.log.sync(); err != nil {
		return err
	}
	st := r.st
	st.Seconds = r.Elapsed()
	st.logPos = r.log.pos()
	var err error
	if st.Estimator, err = estimator.State(r.spec.Estimator); err != nil {
		return err
	}
	js, err := json.Marshal(st)
	if err != nil {
		return err
	}
	ts, err := json.Marshal(r.spec.State)
	if err != nil {
		return err
	}
	if p := r.spec.Privacy; p != nil && !p.ReleaseUnprotected {
		// A checkpoint is an output too: the trainer's running
		// statistics of the private records stay out of it.
		if ts, _, err = p.release(ts); err != nil {
			return err
		}
	}
	meta := checkpoint.Meta{Step: r.step, Config: ConfigMap(r.spec.Config), Extra: map[string]string{extraRun: string(js), extraTrainer: string(ts)}}
	for k, v := range r.spec.Extra {
		meta.Extra[k] = v
	}
	for name, g := range r.spec.RNGs {
		if err := meta.SetRNG(name, g); err != nil {
			return err
		}
	}
	if err := checkpoint.Save(r.ckptPath(), meta, r.spec.Params, r.spec.Optimizer); err != nil {
		return err
	}
	r.saved = r.step
	return nil
}

// restore reads the checkpoint, checks that it, the configuration, the data
// and the log belong together, and restores everything save wrote.
func (r *Run) restore() error {
	dir := r.opts.Out
	l, err := checkpoint.Load(r.ckptPath())
	if errors.Is(err, fs.ErrNotExist) {
		return &NotResumableError{dir, "it holds no checkpoint (the run stopped before its first one)"}
	}
	if err != nil {
		return err
	}
	if w := l.Warning(); w != "" && r.opts.Progress != nil {
		fmt.Fprintln(r.opts.Progress, w)
	}
	st, err := runState(l)
	if err != nil {
		return err
	}
	if st == nil {
		return &NotResumableError{dir, "its checkpoint was written by an older psclip and records neither its data nor its log, so a resume could not be checked"}
	}
	if st.Kind != r.spec.Kind {
		return &KindError{Path: l.Path, Kind: st.Kind, Want: r.spec.Kind}
	}
	if err := l.CheckConfig(ConfigMap(r.spec.Config), r.spec.MayDiffer...); err != nil {
		var ce *checkpoint.ConfigError
		if errors.As(err, &ce) {
			return &ConfigChangedError{Dir: dir, Changes: ce.Diffs}
		}
		return err
	}
	if diffs := r.data.Diff(st.Data); diffs != nil {
		return &DataChangedError{Dir: dir, Was: st.Data.Source, Now: r.data.Source, Changes: diffs}
	}
	if l.Step > r.spec.Steps {
		return &ConfigChangedError{Dir: dir, Changes: []string{fmt.Sprintf("the checkpoint is at step %d, past the %d steps of this run", l.Step, r.spec.Steps)}}
	}
	if r.kept, r.lines, err = keptLog(dir, st.logPos); err != nil {
		return err
	}
	for name, g := range r.spec.RNGs {
		if err := l.RestoreRNG(name, g); err != nil {
			return err
		}
	}
	if err := estimator.SetState(r.spec.Estimator, st.Estimator); err != nil {
		return fmt.Errorf("checkpoint %s: %w", l.Path, err)
	}
	if err := json.Unmarshal([]byte(l.Extra[extraTrainer]), r.spec.State); err != nil {
		return fmt.Errorf("checkpoint %s: trainer state: %w", l.Path, err)
	}
	if err := l.Restore(r.spec.Params, r.spec.Optimizer); err != nil {
		return err
	}
	st.Estimator = nil
	r.st = *st
	r.step, r.saved, r.resumed = l.Step, l.Step, true
	return nil
}

// runState decodes the run layer's state of a checkpoint; nil for a
// checkpoint written before the run layer kept one.
func runState(l *checkpoint.Loaded) (*state, error) {
	js, ok := l.Extra[extraRun]
	if !ok {
		return nil, nil
	}
	var st state
	if err := json.Unmarshal([]byte(js), &st); err != nil {
		return nil, fmt.Errorf("checkpoint %s: run state: %w", l.Path, err)
	}
	return &st, nil
}

// CheckKind returns a *KindError unless the checkpoint l was written by a
// trainer of kind want. A checkpoint of an older psclip records no kind; it
// is taken for want if its configuration has the setting key, which every
// configuration of that kind has.
func CheckKind(l *checkpoint.Loaded, want, key string) error {
	st, err := runState(l)
	if err != nil {
		return err
	}
	switch {
	case st != nil && st.Kind != want:
		return &KindError{Path: l.Path, Kind: st.Kind, Want: want}
	case st == nil:
		if _, ok := l.Config[key]; !ok {
			return &KindError{Path: l.Path, Want: want}
		}
	}
	return nil
}
