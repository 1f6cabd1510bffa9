// Package table reads tabular data from CSV for a model of numeric
// features: a header row naming the columns, one of them the target, the
// others numeric features. The target is a class (classification: any
// text, classes in byte order of their names) or a number (regression),
// or Infer tells the two apart from the column (see Infer).
//
// Every value must be present and finite: a missing value ("", "NA", "?"
// or any text in a feature column) is refused with its line and column
// rather than guessed, so a model never trains on imputed data it was not
// told about.
package table

import (
	"encoding/csv"
	"errors"
	"fmt"
	"io"
	"math"
	"slices"
	"strconv"
	"strings"

	"github.com/psclip/psclip/internal/regfile"
)

// Task is what the target column holds.
type Task int

const (
	Classification Task = iota // a class name per row
	Regression                 // a number per row
	// Infer reads the target as a number (Regression) when every value
	// is one and they are not a few whole numbers: some value has a
	// fractional part, or there are more than MaxInferredClasses distinct
	// values. Otherwise (text, or a few whole numbers such as 0 and 1) it
	// reads a class (Classification). Table.Task says which.
	Infer
)

// MaxInferredClasses is the most distinct whole numbers Infer reads as
// classes.
const MaxInferredClasses = 20

func (t Task) String() string {
	switch t {
	case Regression:
		return "regression"
	case Infer:
		return "inferred"
	}
	return "classification"
}

// Limits on what is read: larger tables are refused as they are read.
const (
	MaxRows    = 10_000_000
	MaxColumns = 100_000
	MaxValues  = 1 << 28 // rows × features, 1 GiB of float32
	MaxClasses = 1 << 16
)

// Config says which column is the target and what it holds.
type Config struct {
	Target string // the target column's header
	Task   Task
	// Classes, if set, are the classes a classification target may name
	// (another split's Table.Classes, in its order): a row of another
	// class is refused with its line, and Table.Classes is Classes even
	// where a class has no row.
	Classes []string
}

// Table is a read table: row i's features are X[i·D : (i+1)·D].
type Table struct {
	Task     Task     // Classification or Regression, never Infer
	Features []string // the feature columns' headers, in file order
	X        []float32
	// Classification: Classes names the classes (byte order), Labels is
	// each row's class index.
	Classes []string
	Labels  []int32
	// Regression: each row's target.
	Targets []float32
}

// Len is the number of rows.
func (t *Table) Len() int { return len(t.X) / max(len(t.Features), 1) }

// D is the number of features.
func (t *Table) D() int { return len(t.Features) }

// Error is a table that cannot be read: Line is the file's line (1 the
// header; 0 for the whole table), Column the column's header where one is
// at fault.
type Error struct {
	Line   int
	Column string
	Reason string
}

func (e *Error) Error() string {
	switch {
	case e.Line == 0:
		return "table: " + e.Reason
	case e.Column == "":
		return fmt.Sprintf("table: line %d: %s", e.Line, e.Reason)
	}
	return fmt.Sprintf("table: line %d, column %q: %s", e.Line, e.Column, e.Reason)
}

// ReadFile reads the CSV file at path (a regular file: a FIFO or device is
// refused, not waited on); errors name the path.
func ReadFile(path string, cfg Config) (*Table, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	t, err := Read(f, cfg)
	if err != nil {
		return nil, fmt.Errorf("%s: %w", path, err)
	}
	return t, nil
}

// Read reads a CSV table (RFC 4180: comma-separated, quotes for values
// holding commas) from r.
func Read(r io.Reader, cfg Config) (*Table, error) {
	cr := csv.NewReader(r)
	cr.ReuseRecord = true
	header, err := cr.Read()
	if errors.Is(err, io.EOF) {
		return nil, &Error{Reason: "no header row: the file is empty"}
	}
	if err != nil {
		return nil, csvError(err)
	}
	if len(header) > MaxColumns {
		return nil, &Error{Line: 1, Reason: fmt.Sprintf("%d columns, more than %d", len(header), MaxColumns)}
	}
	header = slices.Clone(header)
	target := -1
	seen := map[string]bool{}
	for i, h := range header {
		h = strings.TrimSpace(h)
		header[i] = h
		switch {
		case h == "":
			return nil, &Error{Line: 1, Reason: fmt.Sprintf("column %d has no header", i+1)}
		case seen[h]:
			return nil, &Error{Line: 1, Column: h, Reason: "two columns have this header"}
		}
		seen[h] = true
		if h == cfg.Target {
			target = i
		}
	}
	if target < 0 {
		return nil, &Error{Line: 1, Reason: fmt.Sprintf("no column %q to predict among %q", cfg.Target, header)}
	}
	if len(header) < 2 {
		return nil, &Error{Line: 1, Reason: "no feature column besides the target"}
	}
	t := &Table{Features: slices.Delete(slices.Clone(header), target, target+1)}
	var known map[string]int32 // cfg.Classes' indices
	if cfg.Classes != nil {
		known = make(map[string]int32, len(cfg.Classes))
		for i, c := range cfg.Classes {
			known[c] = int32(i)
		}
	}
	var classes []string // per row, for classification
	for line := 2; ; line++ {
		rec, err := cr.Read()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return nil, csvError(err)
		}
		if t.Len() >= MaxRows || len(t.X)+t.D() > MaxValues {
			return nil, &Error{Line: line, Reason: fmt.Sprintf("more than %d rows or %d values", MaxRows, MaxValues)}
		}
		for i, v := range rec {
			v = strings.TrimSpace(v)
			if i == target {
				switch {
				case cfg.Task == Regression:
					y, err := number(v)
					if err != nil {
						return nil, &Error{Line: line, Column: header[i], Reason: err.Error()}
					}
					t.Targets = append(t.Targets, y)
				case missing(v):
					return nil, &Error{Line: line, Column: header[i], Reason: fmt.Sprintf("missing target %q", v)}
				case known != nil && !hasKey(known, v):
					return nil, &Error{Line: line, Column: header[i], Reason: fmt.Sprintf("class %q is not one of %q", v, cfg.Classes)}
				default:
					classes = append(classes, v)
				}
				continue
			}
			x, err := number(v)
			if err != nil {
				return nil, &Error{Line: line, Column: header[i], Reason: err.Error()}
			}
			t.X = append(t.X, x)
		}
	}
	if t.Len() == 0 {
		return nil, &Error{Reason: "no rows below the header"}
	}
	t.Task = cfg.Task
	if t.Task == Infer {
		t.Task = infer(classes)
	}
	switch {
	case t.Task == Regression && cfg.Task == Infer:
		t.Targets = make([]float32, len(classes))
		for i, v := range classes {
			t.Targets[i], _ = number(v) // infer has parsed every one
		}
	case t.Task == Classification:
		return t, t.label(classes, cfg.Classes, known)
	}
	return t, nil
}

// infer is Infer's decision on the target values v.
func infer(v []string) Task {
	distinct := map[float32]bool{}
	whole := true
	for _, s := range v {
		x, err := number(s)
		if err != nil {
			return Classification
		}
		distinct[x] = true
		whole = whole && x == float32(math.Trunc(float64(x)))
	}
	if whole && len(distinct) <= MaxInferredClasses {
		return Classification
	}
	return Regression
}

// hasKey reports whether m has the key k.
func hasKey(m map[string]int32, k string) bool {
	_, ok := m[k]
	return ok
}

// label sets Classes and Labels from each row's class name: the classes
// given (with index their indices), or else those of the rows.
func (t *Table) label(names, classes []string, index map[string]int32) error {
	if classes != nil {
		t.Classes = slices.Clone(classes)
		t.Labels = make([]int32, len(names))
		for i, n := range names {
			t.Labels[i] = index[n]
		}
		return nil
	}
	t.Classes = slices.Compact(slices.Sorted(slices.Values(names)))
	switch {
	case len(t.Classes) < 2:
		return &Error{Reason: fmt.Sprintf("every row has class %q: a classifier needs at least 2", t.Classes[0])}
	case len(t.Classes) > MaxClasses:
		return &Error{Reason: fmt.Sprintf("%d classes, more than %d", len(t.Classes), MaxClasses)}
	}
	t.Labels = make([]int32, len(names))
	for i, n := range names {
		k, _ := slices.BinarySearch(t.Classes, n)
		t.Labels[i] = int32(k)
	}
	return nil
}

// number parses a feature or regression target: a finite float32.
func number(v string) (float32, error) {
	if missing(v) {
		return 0, fmt.Errorf("missing value %q", v)
	}
	x, err := strconv.ParseFloat(v, 32)
	switch {
	case err != nil && errors.Is(err, strconv.ErrRange):
		return 0, fmt.Errorf("%q is beyond float32's range", v)
	case err != nil:
		return 0, fmt.Errorf("%q is not a number", v)
	case math.IsNaN(x) || math.IsInf(x, 0):
		return 0, fmt.Errorf("%q is not finite", v)
	}
	return float32(x), nil
}

// missing reports the usual spellings of a missing value.
func missing(v string) bool {
	switch strings.ToLower(v) {
	case "", "na", "nan", "?", "null", "none":
		return true
	}
	return false
}

// csvError turns encoding/csv's error (a wrong number of fields, a bare
// quote) into an *Error with its line.
func csvError(err error) error {
	var pe *csv.ParseError
	if errors.As(err, &pe) {
		return &Error{Line: pe.Line, Reason: pe.Err.Error()}
	}
	return err
}

// Standardizer maps each feature to zero mean and unit variance with
// statistics taken from one table (the training split: fit on training
// data only, apply to every split). Statistics fitted on private records
// are not covered by a DP-SGD run's ε: under DP, set Mean and Std from
// public knowledge (ranges, published statistics) instead of Fit.
type Standardizer struct {
	Mean, Std []float64 // per feature; Std 1 where a feature is constant
}

// Fit returns the standardizer of t's features (float64 sums, biased
// variance).
func Fit(t *Table) Standardizer {
	d, n := t.D(), t.Len()
	s := Standardizer{Mean: make([]float64, d), Std: make([]float64, d)}
	for i := range n {
		for j := range d {
			s.Mean[j] += float64(t.X[i*d+j])
		}
	}
	for j := range d {
		s.Mean[j] /= float64(n)
	}
	for i := range n {
		for j := range d {
			e := float64(t.X[i*d+j]) - s.Mean[j]
			s.Std[j] += e * e
		}
	}
	for j := range d {
		if s.Std[j] = math.Sqrt(s.Std[j] / float64(n)); s.Std[j] == 0 {
			s.Std[j] = 1
		}
	}
	return s
}

// Apply standardizes t's features in place.
func (s Standardizer) Apply(t *Table) {
	d := t.D()
	for i := range t.X {
		j := i % d
		t.X[i] = float32((float64(t.X[i]) - s.Mean[j]) / s.Std[j])
	}
}
