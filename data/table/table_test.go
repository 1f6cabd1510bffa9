package table

import (
	"errors"
	"fmt"
	"math"
	"slices"
	"strings"
	"testing"
)

func TestReadClassification(t *testing.T) {
	csv := "age, income,label,hours\n39,77516,<=50K,40\n50,83311,>50K,13\n38,\"215,646\",<=50K,40\n"
	// "215,646" is one quoted field, and not a number.
	if _, err := Read(strings.NewReader(csv), Config{Target: "label"}); err == nil {
		t.Fatal("a quoted 215,646 read as a number")
	}
	csv = strings.Replace(csv, `"215,646"`, "215646", 1)
	tb, err := Read(strings.NewReader(csv), Config{Target: "label"})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tb.Features, []string{"age", "income", "hours"}) || tb.Len() != 3 || tb.D() != 3 {
		t.Fatalf("features %q, %d rows", tb.Features, tb.Len())
	}
	if !slices.Equal(tb.X, []float32{39, 77516, 40, 50, 83311, 13, 38, 215646, 40}) {
		t.Errorf("X %v", tb.X)
	}
	if !slices.Equal(tb.Classes, []string{"<=50K", ">50K"}) || !slices.Equal(tb.Labels, []int32{0, 1, 0}) || tb.Targets != nil {
		t.Errorf("classes %q, labels %v, targets %v", tb.Classes, tb.Labels, tb.Targets)
	}
}

func TestReadRegression(t *testing.T) {
	tb, err := Read(strings.NewReader("x1,y,x2\n1.5,-2e3,0\n-1,0.25,1e-3\n"), Config{Target: "y", Task: Regression})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tb.Targets, []float32{-2000, 0.25}) || !slices.Equal(tb.X, []float32{1.5, 0, -1, 0.001}) || tb.Labels != nil {
		t.Errorf("targets %v, X %v, labels %v", tb.Targets, tb.X, tb.Labels)
	}
}

func TestReadRefuses(t *testing.T) {
	for _, tc := range []struct {
		name, csv string
		task      Task
		line      int
		column    string
	}{
		{"empty", "", Classification, 0, ""},
		{"no rows", "a,y\n", Classification, 0, ""},
		{"no target column", "a,b\n1,2\n", Classification, 1, ""},
		{"only the target", "y\nx\n", Classification, 1, ""},
		{"duplicate header", "a,a,y\n1,2,x\n", Classification, 1, "a"},
		{"empty header", "a,,y\n1,2,x\n", Classification, 1, ""},
		{"short row", "a,y\n1,x\n2\n", Classification, 3, ""},
		{"text feature", "a,y\n1,x\nblue,z\n", Classification, 3, "a"},
		{"missing feature", "a,y\n1,x\n,z\n", Classification, 3, "a"},
		{"NA feature", "a,y\n1,x\nNA,z\n", Classification, 3, "a"},
		{"infinite feature", "a,y\n1,x\ninf,z\n", Classification, 3, "a"},
		{"overflow", "a,y\n1,x\n1e39,z\n", Classification, 3, "a"},
		{"missing class", "a,y\n1,x\n2,?\n", Classification, 3, "y"},
		{"one class", "a,y\n1,x\n2,x\n", Classification, 0, ""},
		{"text target", "a,y\n1,2\n2,high\n", Regression, 3, "y"},
		{"NaN target", "a,y\n1,2\n2,NaN\n", Regression, 3, "y"},
		{"bare quote", "a,y\n1,x\"y\n", Classification, 2, ""},
	} {
		_, err := Read(strings.NewReader(tc.csv), Config{Target: "y", Task: tc.task})
		var te *Error
		if !errors.As(err, &te) || te.Line != tc.line || te.Column != tc.column {
			t.Errorf("%s: error %v, want a *table.Error at line %d, column %q", tc.name, err, tc.line, tc.column)
		}
	}
}

// Infer reads text and a few whole numbers as classes, fractions and many
// whole numbers as numbers, and says which in Task.
func TestReadInfer(t *testing.T) {
	many := "a,y\n"
	for i := range MaxInferredClasses + 1 {
		many += fmt.Sprintf("%d,%d\n", i, 10*i)
	}
	for _, tc := range []struct {
		name, csv string
		want      Task
	}{
		{"text", "a,y\n1,cat\n2,dog\n", Classification},
		{"0 and 1", "a,y\n1,0\n2,1\n3,1\n", Classification},
		{"a fraction", "a,y\n1,0\n2,1.5\n", Regression},
		{"many whole numbers", many, Regression},
		{"numbers and text", "a,y\n1,0.5\n2,high\n", Classification},
	} {
		tb, err := Read(strings.NewReader(tc.csv), Config{Target: "y", Task: Infer})
		if err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if tb.Task != tc.want || (tb.Task == Regression) != (len(tb.Targets) == tb.Len()) || (tb.Task == Classification) != (len(tb.Labels) == tb.Len()) {
			t.Errorf("%s: task %v, %d targets, %d labels, want %v", tc.name, tb.Task, len(tb.Targets), len(tb.Labels), tc.want)
		}
	}
	tb, _ := Read(strings.NewReader("a,y\n1,0\n2,1.5\n"), Config{Target: "y", Task: Infer})
	if !slices.Equal(tb.Targets, []float32{0, 1.5}) {
		t.Errorf("inferred targets %v, want [0 1.5]", tb.Targets)
	}
}

// With Config.Classes, the classes are those given, in their order, and a
// row of another class is refused at its line.
func TestReadKnownClasses(t *testing.T) {
	known := []string{"b", "a", "c"}
	tb, err := Read(strings.NewReader("x,y\n1,a\n2,a\n"), Config{Target: "y", Classes: known})
	if err != nil {
		t.Fatal(err)
	}
	if !slices.Equal(tb.Classes, known) || !slices.Equal(tb.Labels, []int32{1, 1}) {
		t.Errorf("classes %q, labels %v", tb.Classes, tb.Labels)
	}
	_, err = Read(strings.NewReader("x,y\n1,a\n2,d\n"), Config{Target: "y", Classes: known})
	var te *Error
	if !errors.As(err, &te) || te.Line != 3 || te.Column != "y" {
		t.Errorf("class d: error %v, want a *table.Error at line 3, column y", err)
	}
}

// Fit's statistics against a hand computation, and Apply standardizing
// another split with them; a constant feature keeps scale 1.
func TestStandardizer(t *testing.T) {
	train := &Table{Features: []string{"a", "b"}, X: []float32{1, 5, 3, 5, 5, 5}}
	s := Fit(train)
	if !slices.Equal(s.Mean, []float64{3, 5}) || math.Abs(s.Std[0]-math.Sqrt(8.0/3)) > 1e-12 || s.Std[1] != 1 {
		t.Fatalf("mean %v, std %v", s.Mean, s.Std)
	}
	test := &Table{Features: []string{"a", "b"}, X: []float32{3, 6}}
	s.Apply(test)
	if test.X[0] != 0 || test.X[1] != 1 {
		t.Errorf("standardized %v, want [0 1]", test.X)
	}
}

// Read never panics and either refuses a table or returns a consistent
// one.
func FuzzRead(f *testing.F) {
	for _, s := range []string{"a,y\n1,x\n2,z\n", "x1,y,x2\n1.5,-2e3,0\n", "\"a\",y\n\"1\",\"x\"\n", ""} {
		f.Add(s, uint8(0))
	}
	f.Fuzz(func(t *testing.T, csv string, task uint8) {
		tb, err := Read(strings.NewReader(csv), Config{Target: "y", Task: Task(task % 3)})
		if err != nil {
			return
		}
		n := tb.Len()
		if n == 0 || len(tb.X) != n*tb.D() || tb.Task == Infer || Task(task%3) != Infer && tb.Task != Task(task%3) ||
			(tb.Task == Regression) != (len(tb.Targets) == n) || (tb.Task == Classification) != (len(tb.Labels) == n) {
			t.Fatalf("%d rows, %d values of %d features, %d targets, %d labels", n, len(tb.X), tb.D(), len(tb.Targets), len(tb.Labels))
		}
		for _, l := range tb.Labels {
			if l < 0 || int(l) >= len(tb.Classes) {
				t.Fatalf("label %d of %d classes", l, len(tb.Classes))
			}
		}
	})
}
