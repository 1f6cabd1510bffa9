package setting

import (
	"errors"
	"math"
	"testing"
)

// The float32 checks accept exactly the normal float32 values of their
// range: 1e39 is +Inf in float32 and 1e-40 subnormal, 1e-320 zero.
func TestFloat32Checks(t *testing.T) {
	const maxf = math.MaxFloat32
	tests := []struct {
		check func(string, float64) error
		name  string
		ok    []float64
		bad   []float64
	}{
		{Positive32, "Positive32", []float64{MinNormal32, 1e-3, 1, maxf}, []float64{0, -1, MinNormal32 / 2, 1e-40, 1e-320, 1e39, math.Inf(1), math.NaN()}},
		{NonNegative32, "NonNegative32", []float64{0, MinNormal32, 0.1, maxf}, []float64{-1, 1e-40, 1e39, math.Inf(1), math.NaN()}},
		{Fraction, "Fraction", []float64{0, 0.5, 0.999}, []float64{1, -0.1, 1e-40, math.NaN()}},
	}
	for _, tt := range tests {
		for _, x := range tt.ok {
			if err := tt.check("F", x); err != nil {
				t.Errorf("%s(%v) = %v, want nil", tt.name, x, err)
			}
		}
		for _, x := range tt.bad {
			var se *Error
			if err := tt.check("F", x); !errors.As(err, &se) || se.Field != "F" || se.Value != x && !math.IsNaN(x) {
				t.Errorf("%s(%v) = %v, want an *Error for F", tt.name, x, err)
			}
		}
	}
}

func TestDistinct(t *testing.T) {
	for _, tc := range []struct {
		xs   []int
		want error
	}{
		{[]int{1, 2, 3}, nil},
		{nil, &Error{Field: "Seeds", Value: "[]", Want: "at least one value"}},
		{[]int{1, 2, 1}, &Error{Field: "Seeds", Value: 1, Want: "each value once (it is listed twice)"}},
	} {
		err := Distinct("Seeds", tc.xs)
		if (err == nil) != (tc.want == nil) || (err != nil && err.Error() != tc.want.Error()) {
			t.Errorf("Distinct(%v) = %v, want %v", tc.xs, err, tc.want)
		}
	}
}

func TestErrorText(t *testing.T) {
	if got, want := Errorf("LR", 1e39, "a positive %s", "number").Error(), "LR = 1e+39, want a positive number"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
	if got, want := Unread("Clip", 3, "sgd does not read it").Error(), "Clip = 3, want unset: sgd does not read it"; got != want {
		t.Errorf("%q, want %q", got, want)
	}
}

func TestFirst(t *testing.T) {
	a, b := Errorf("A", 1, "x"), Errorf("B", 2, "y")
	if First() != nil || First(nil, nil) != nil {
		t.Error("First of no error is not nil")
	}
	if got := First(nil, a, b); got != a {
		t.Errorf("First = %v, want %v", got, a)
	}
}
