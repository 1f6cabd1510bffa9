// Package setting reports configuration values that are out of range, in
// the vocabulary of the configuration's fields rather than of any command
// line: an *Error names the field (its Go name, e.g. "LR" or "Alpha"), the
// value and what is valid. A command maps field names to its own flags;
// errors.As tells such a mistake in the input from a failure of the work.
//
// The checks here test a float64 setting in the precision it is used in:
// the networks train in float32, so a learning rate or a clipping threshold
// must be a normal float32 — 1e39 is +Inf there and 1e-320 is 0.
package setting

import (
	"fmt"
	"math"
	"slices"
)

// Error is a setting whose value is not valid.
type Error struct {
	Field string // the field, by its Go name: "LR", "Clip", "Methods"
	Value any    // the value given
	Want  string // what is valid, e.g. "a positive normal float32"
}

func (e *Error) Error() string { return fmt.Sprintf("%s = %v, want %s", e.Field, e.Value, e.Want) }

// Errorf returns an *Error for field and value, with Want formatted.
func Errorf(field string, value any, format string, a ...any) error {
	return &Error{Field: field, Value: value, Want: fmt.Sprintf(format, a...)}
}

// MinNormal32 is the smallest positive normal float32, 2^-126.
const MinNormal32 = 0x1p-126

// Normal32 reports whether x is a normal float32 in magnitude, finite and
// not subnormal; 0 is not.
func Normal32(x float64) bool {
	a := math.Abs(x)
	return a >= MinNormal32 && a <= math.MaxFloat32
}

// Positive32 checks that x is a positive normal float32.
func Positive32(field string, x float64) error {
	if x > 0 && Normal32(x) {
		return nil
	}
	return &Error{Field: field, Value: x, Want: "a positive normal float32 (2^-126 to 3.4e38)"}
}

// NonNegative32 checks that x is 0 or a positive normal float32.
func NonNegative32(field string, x float64) error {
	if x == 0 {
		return nil
	}
	if x > 0 && Normal32(x) {
		return nil
	}
	return &Error{Field: field, Value: x, Want: "0 or a positive normal float32 (2^-126 to 3.4e38)"}
}

// Fraction checks that 0 ≤ x < 1 and that a non-zero x is a normal float32.
func Fraction(field string, x float64) error {
	if x == 0 || (x > 0 && x < 1 && Normal32(x)) {
		return nil
	}
	return &Error{Field: field, Value: x, Want: "0, or a normal float32 between 0 and 1 (1 excluded)"}
}

// Positive checks that the integer n is > 0.
func Positive(field string, n int) error {
	if n > 0 {
		return nil
	}
	return &Error{Field: field, Value: n, Want: "> 0"}
}

// NonNegative checks that the integer n is ≥ 0.
func NonNegative(field string, n int) error {
	if n >= 0 {
		return nil
	}
	return &Error{Field: field, Value: n, Want: "≥ 0"}
}

// Distinct checks that the list xs is not empty and holds no value twice.
func Distinct[T comparable](field string, xs []T) error {
	if len(xs) == 0 {
		return &Error{Field: field, Value: "[]", Want: "at least one value"}
	}
	for i, x := range xs {
		if slices.Contains(xs[:i], x) {
			return &Error{Field: field, Value: x, Want: "each value once (it is listed twice)"}
		}
	}
	return nil
}

// Unread returns the error for a setting that is set although the
// configuration does not read it: such a setting is refused rather than
// silently ignored. why says who reads it, e.g. "read only by clip-sgd".
func Unread(field string, value any, why string) error {
	return &Error{Field: field, Value: value, Want: "unset: " + why}
}

// First returns the first of errs that is not nil, or nil: a
// configuration's checks, evaluated in the order their errors are to be
// reported.
func First(errs ...error) error {
	for _, err := range errs {
		if err != nil {
			return err
		}
	}
	return nil
}
