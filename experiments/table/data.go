package table

import (
	"bytes"
	"fmt"
	"iter"
	"math/rand/v2"
	"slices"

	tabledata "github.com/psclip/psclip/data/table"
	"github.com/psclip/psclip/internal/regfile"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/setting"
)

// Data is a loaded table: the rows to train on (split into training and
// validation rows by each run's seed) and, optionally, a test table of
// the same columns.
type Data struct {
	Path, TestPath string
	Train, Test    *tabledata.Table // Test nil without a test file
	hash, testHash string           // the files' SHA-256
}

// LoadData reads the CSV file at path and, unless testPath is empty, the
// test file at testPath, whose feature columns must be path's (same
// headers, same order) and whose classes must be among path's. The target
// column is read as cfg's task says, or inferred (data/table.Infer). Its
// errors name the file, and the line and column at fault (*table.Error).
func LoadData(path, testPath string, cfg Config) (*Data, error) {
	d := &Data{Path: path, TestPath: testPath}
	var err error
	if d.Train, d.hash, err = readFile(path, tabledata.Config{Target: cfg.Target, Task: cfg.readTask()}); err != nil {
		return nil, err
	}
	if testPath == "" {
		return d, nil
	}
	tc := tabledata.Config{Target: cfg.Target, Task: d.Train.Task, Classes: d.Train.Classes}
	if d.Test, d.testHash, err = readFile(testPath, tc); err != nil {
		return nil, err
	}
	if !slices.Equal(d.Test.Features, d.Train.Features) {
		return nil, fmt.Errorf("%s: feature columns %q, want %s's %q", testPath, d.Test.Features, path, d.Train.Features)
	}
	return d, nil
}

// readFile reads one table and hashes its bytes.
func readFile(path string, cfg tabledata.Config) (*tabledata.Table, string, error) {
	b, err := regfile.ReadFile(path)
	if err != nil {
		return nil, "", err
	}
	t, err := tabledata.Read(bytes.NewReader(b), cfg)
	if err != nil {
		return nil, "", fmt.Errorf("%s: %w", path, err)
	}
	return t, run.Hash(b), nil
}

// Identity is the identity of the data for the run layer: the content
// hashes of the training and the test file.
func (d *Data) Identity() run.Data {
	id := run.Data{Source: d.Path, SHA256: map[string]string{"train": d.hash}}
	if d.Test != nil {
		id.SHA256["test"] = d.testHash
	}
	return id
}

// splitStream is the PCG stream of the validation split.
const splitStream = 0x7461626c65 // "table"

// split returns the training and validation rows of a run of c, as
// indices into the file's rows, ascending: ⌊ValFraction·n⌋ rows at random
// from Seed for validation. A share that holds out no row, or every row,
// of this table is refused: it is not the split asked for.
func (c *Config) split(n int) (train, valid []int, err error) {
	v := int(c.ValFraction * float64(n))
	switch {
	case c.ValFraction > 0 && v == 0:
		return nil, nil, setting.Errorf("ValFraction", c.ValFraction, "0 or at least %.3g: a share that holds out a row of the %d", 1/float64(n), n)
	case v >= n:
		return nil, nil, setting.Errorf("ValFraction", c.ValFraction, "below %.3g: a share that keeps a training row of the %d", float64(n-1)/float64(n), n)
	}
	perm := rand.New(rand.NewPCG(c.Seed, splitStream)).Perm(n)
	valid, train = slices.Sorted(slices.Values(perm[:v])), slices.Sorted(slices.Values(perm[v:]))
	return train, valid, nil
}

// seq yields 0, 1, …, n−1.
func seq(n int) iter.Seq[int] {
	return func(yield func(int) bool) {
		for i := range n {
			if !yield(i) {
				return
			}
		}
	}
}

// rows returns the rows idx of t as a new table.
func rows(t *tabledata.Table, idx []int) *tabledata.Table {
	d := t.D()
	s := &tabledata.Table{Task: t.Task, Features: t.Features, Classes: t.Classes, X: make([]float32, 0, len(idx)*d)}
	for _, i := range idx {
		s.X = append(s.X, t.X[i*d:(i+1)*d]...)
		if t.Labels != nil {
			s.Labels = append(s.Labels, t.Labels[i])
		} else {
			s.Targets = append(s.Targets, t.Targets[i])
		}
	}
	return s
}
