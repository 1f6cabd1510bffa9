package images

import (
	"bytes"
	"encoding/json"
	"fmt"
	"maps"
	"math"
	"os"
	"path/filepath"
	"slices"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/run"
)

// NoRunsError is a results file that holds no runs to report on.
type NoRunsError struct{ Path string }

func (e *NoRunsError) Error() string { return e.Path + " holds no runs" }

// Report rewrites the results of the experiment whose results.json is in
// dir from the runs it records, without training: the tables' rows (with
// the per-seed values and the paired comparisons with SGD) are computed
// again by this version of the code and replace the file's "table" and
// "grid"; every other entry of the file (the experiment, the runs with
// every epoch, the provenance) is kept byte for byte, in its place. The
// non-empty tables are written too, each file atomically; the figures are
// not redrawn. It is how results written before a statistic existed get
// it; a statistic an older log did not record (the per-epoch test
// accuracy, the tail index) is unknown, not 0. The directory is not
// locked: the report on an experiment still running is overwritten when it
// finishes.
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
	if err := unrecorded(b, &r); err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	r.aggregate()
	out, err := replaceEntries(b, map[string]any{"table": r.Table, "grid": r.Grid})
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	files := map[string][]byte{run.ResultsFile: out}
	for name, table := range r.tables() {
		if table != "" {
			files[name] = []byte(table)
		}
	}
	for name, content := range files {
		if err := atomicfile.WriteFile(filepath.Join(dir, name), content); err != nil {
			return nil, err
		}
	}
	return &r, nil
}

// tables are the experiment's tables by file name; GridMD only with a
// grid, AugmentMD only when a run logged clipping by AutoAugment
// operation.
func (r *Results) tables() map[string]string {
	t := map[string]string{TableMD: r.MainTable(), ClippingMD: r.ClippingTable()}
	if g := r.GridTable(); g != "" {
		t[GridMD] = g
	}
	if a := r.AugmentTable(); a != "" {
		t[AugmentMD] = a
	}
	return t
}

// unrecorded sets to NaN the epoch statistics that the results file b does
// not hold for an epoch (json.Unmarshal leaves them 0): older logs lack
// the per-epoch test figures, the tail index and the adaptive
// thresholds' diagnostics.
func unrecorded(b []byte, r *Results) error {
	var raw struct {
		Runs []struct {
			Curve []map[string]json.RawMessage `json:"curve"`
		} `json:"runs"`
	}
	if err := json.Unmarshal(b, &raw); err != nil {
		return err
	}
	nan := Float(math.NaN())
	for i, run := range raw.Runs {
		for j, keys := range run.Curve {
			ep := &r.Runs[i].Curve[j]
			for key, field := range map[string]*Float{
				"train_loss": &ep.TrainLoss, "train_acc": &ep.TrainAcc, "val_loss": &ep.ValLoss, "val_acc": &ep.ValAcc,
				"test_loss": &ep.TestLoss, "test_acc": &ep.TestAcc, "mean_sample_norm": &ep.MeanSampleNorm,
				"tail_index": &ep.TailIndex, "mean_grad_norm": &ep.MeanGradNorm,
				"p_hat": &ep.PHat, "sigma_hat": &ep.SigmaHat, "gamma": &ep.Gamma,
			} {
				if _, ok := keys[key]; !ok {
					*field = nan
				}
			}
		}
	}
	return nil
}

// replaceEntries returns the JSON object b, indented as json.MarshalIndent
// with two spaces does, with the values of the keys in entries replaced
// (or appended, if b lacks them) and every other entry kept in its place.
func replaceEntries(b []byte, entries map[string]any) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, fmt.Errorf("not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	done := map[string]bool{}
	put := func(key string, value []byte) error {
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		k, _ := json.Marshal(key)
		out.Write(k)
		out.WriteByte(':')
		return json.Compact(&out, value)
	}
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		key, _ := t.(string)
		var value json.RawMessage
		if err := dec.Decode(&value); err != nil {
			return nil, err
		}
		if v, ok := entries[key]; ok {
			if value, err = json.Marshal(v); err != nil {
				return nil, err
			}
			done[key] = true
		}
		if err := put(key, value); err != nil {
			return nil, err
		}
	}
	for _, key := range slices.Sorted(maps.Keys(entries)) {
		if v := entries[key]; !done[key] {
			value, err := json.Marshal(v)
			if err != nil {
				return nil, err
			}
			if err := put(key, value); err != nil {
				return nil, err
			}
		}
	}
	out.WriteByte('}')
	var indented bytes.Buffer
	if err := json.Indent(&indented, out.Bytes(), "", "  "); err != nil {
		return nil, err
	}
	indented.WriteByte('\n')
	return indented.Bytes(), nil
}
