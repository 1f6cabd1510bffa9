package run

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"maps"
	"path/filepath"
	"slices"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/provenance"
)

// The files of an experiment's directory: its results, and the directory
// of its runs, one run directory each.
const (
	ResultsFile = "results.json"
	RunsDir     = "runs"
)

// Experiment is the directory of an experiment: a study of several runs,
// each in its own run directory under RunsDir, and their results. It is
// held as a run directory is (see OpenDir).
type Experiment struct {
	opts Options
	dir  *Dir
	prov provenance.Record // of the command, from OpenExperiment
}

// OpenExperiment checks the experiment config with check (its errors are
// returned as they are) and opens the experiment directory o.Out as
// OpenDir opens a run's, of kind o.Kind (default "experiment"): a fresh
// experiment into one that holds an experiment is refused with an
// *ExistsError, a directory of another kind with a *DirKindError, one that
// is not psclip's with a *NotOwnedError, and another process holding it is
// a *LockedError. The directory's record keeps config (ConfigMap), so that
// a resume with another configuration is refused with a
// *ConfigChangedError before any run is trained. With o.Gather it then
// copies in the runs of those experiments (see Options.Gather; a part that
// is not an experiment of its kind is a *GatherError or *DirKindError, one
// still running a *LockedError) and reuses them.
func OpenExperiment(o Options, config any, check func() error) (*Experiment, error) {
	if err := check(); err != nil {
		return nil, err
	}
	if o.Kind == "" {
		o.Kind = "experiment"
	}
	if len(o.Gather) > 0 && o.Restart {
		return nil, errors.New("run: Gather and Restart exclude each other")
	}
	d, err := openDir(o, ConfigMap(config), ResultsFile, RunsDir)
	if err != nil {
		return nil, err
	}
	if len(o.Gather) > 0 {
		if err := gather(o.Out, o.Kind, o.Gather, o.Progress); err != nil {
			d.Close()
			return nil, err
		}
		o.Resume = true // the runs gathered are reused or continued
	}
	return &Experiment{opts: o, dir: d, prov: provenance.New()}, nil
}

// Provenance is the record of the experiment's results: its command, and
// of its runs (their Summary.Provenance, in order) the commits, CPU,
// kernel, threads, load and time (provenance.Merge), so that results
// gathered from runs trained earlier, by other sessions, say how those runs
// were made, not how they were read back.
func (e *Experiment) Provenance(runs ...provenance.Record) provenance.Record {
	gather := e.prov
	gather.Finish()
	return provenance.Merge(gather, runs...)
}

// RunOptions are the options of the run in RunsDir/path…, labelled label
// in progress lines: resumed or restarted as the experiment is, and owned
// by it (Options.Owner).
func (e *Experiment) RunOptions(label string, path ...string) Options {
	return Options{
		Out:    filepath.Join(append([]string{e.opts.Out, RunsDir}, path...)...),
		Resume: e.opts.Resume, Restart: e.opts.Restart, Progress: e.opts.Progress, Label: label, Owner: e.opts.Kind,
	}
}

// Train returns the result of the run of config on data with options o
// (from RunOptions): unless the experiment is resumed and the run finished
// (see Reuse), it sets the run up with setup, such as a trainer's New, and
// trains it. Its errors name the run by its label.
func Train[R any, T interface {
	Train(context.Context) (*R, error)
}](ctx context.Context, o Options, config any, data Data, setup func(Options) (T, error)) (*R, error) {
	r, err := Reuse(o, config, data, func(o Options) (*R, error) {
		t, err := setup(o)
		if err != nil {
			return nil, err
		}
		return t.Train(ctx)
	})
	if err != nil {
		return nil, fmt.Errorf("run %s: %w", o.Label, err)
	}
	return r, nil
}

// Finish writes the experiment's results: results (indented JSON) to
// ResultsFile and tables, a map from file name to content, each atomically.
func (e *Experiment) Finish(results any, tables map[string]string) error {
	b, err := json.MarshalIndent(results, "", "  ")
	if err != nil {
		return err
	}
	if err := atomicfile.WriteFile(filepath.Join(e.opts.Out, ResultsFile), append(b, '\n')); err != nil {
		return err
	}
	for _, name := range slices.Sorted(maps.Keys(tables)) {
		if err := atomicfile.WriteFile(filepath.Join(e.opts.Out, name), []byte(tables[name])); err != nil {
			return err
		}
	}
	return nil
}

// Close releases the experiment directory.
func (e *Experiment) Close() error { return e.dir.Close() }
