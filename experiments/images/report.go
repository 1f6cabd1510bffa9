package images

import (
	"encoding/json"
	"fmt"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/run"
)

// NoRunsError is a results file that holds no runs to report on.
type NoRunsError struct{ Path string }

func (e *NoRunsError) Error() string { return e.Path + " holds no runs" }

// Report rewrites the results of the experiment whose results.json is in
// dir from the runs it records, without training: the tables' rows, the
// per-seed values and the paired comparisons with SGD are computed again by
// this version of the code and written to results.json and the non-empty
// tables, each file atomically; the experiment, the runs (every epoch of
// every run) and the provenance are kept as they are, and the figures are
// not redrawn. It is how results
// written before a statistic existed get it. The directory is not locked: a
// report on an experiment still running is overwritten when it finishes.
func Report(dir string) (*Results, error) {
	path := filepath.Join(dir, run.ResultsFile)
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, err
	}
	var r Results
	if err := json.Unmarshal(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	if len(r.Runs) == 0 {
		return nil, &NoRunsError{path}
	}
	r.aggregate()
	if err := r.write(dir); err != nil {
		return nil, err
	}
	return &r, nil
}

// write writes results.json and the non-empty tables to dir, each
// atomically.
func (r *Results) write(dir string) error {
	b, err := json.MarshalIndent(r, "", "  ")
	if err != nil {
		return err
	}
	files := map[string][]byte{run.ResultsFile: append(b, '\n')}
	for name, table := range r.tables() {
		if table != "" {
			files[name] = []byte(table)
		}
	}
	for name, content := range files {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), content); err != nil {
			return err
		}
	}
	return nil
}

// tables are the experiment's tables by file name.
func (r *Results) tables() map[string]string {
	return map[string]string{TableMD: r.MainTable(), GridMD: r.GridTable(), ClippingMD: r.ClippingTable()}
}
