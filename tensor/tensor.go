// Package tensor holds the dense float32 arrays that psclip's layers pass to
// each other. It is deliberately small: a shape and a contiguous row-major
// slice, with no autodiff and no broadcasting. Arithmetic lives in package
// kernels and in the layers themselves.
package tensor

import (
	"fmt"
	"strings"
)

// Tensor is a dense row-major float32 array. Data has exactly Len() elements;
// the last dimension is contiguous.
type Tensor struct {
	Shape []int
	Data  []float32
}

// New returns a zero tensor of the given shape. It panics if a dimension is
// negative, as make does for a negative length.
func New(shape ...int) *Tensor {
	return &Tensor{Shape: append([]int(nil), shape...), Data: make([]float32, Numel(shape))}
}

// From wraps data in a tensor of the given shape without copying. It panics if
// len(data) does not match the shape.
func From(data []float32, shape ...int) *Tensor {
	if n := Numel(shape); n != len(data) {
		panic(fmt.Sprintf("tensor: %d elements do not fit shape %v (%d)", len(data), shape, n))
	}
	return &Tensor{Shape: append([]int(nil), shape...), Data: data}
}

// Numel is the number of elements of a tensor with the given shape.
func Numel(shape []int) int {
	n := 1
	for _, d := range shape {
		if d < 0 {
			panic(fmt.Sprintf("tensor: negative dimension in shape %v", shape))
		}
		n *= d
	}
	return n
}

// Len is the number of elements.
func (t *Tensor) Len() int { return len(t.Data) }

// Dim returns the size of dimension i; negative i counts from the end.
func (t *Tensor) Dim(i int) int {
	if i < 0 {
		i += len(t.Shape)
	}
	return t.Shape[i]
}

// Rows is the product of all dimensions but the last: the number of rows when
// the tensor is viewed as a matrix with the last dimension as columns.
func (t *Tensor) Rows() int {
	if len(t.Shape) == 0 {
		return 1
	}
	return len(t.Data) / max(t.Shape[len(t.Shape)-1], 1)
}

// Reshape returns a tensor sharing t's data with a new shape of equal size.
func (t *Tensor) Reshape(shape ...int) *Tensor { return From(t.Data, shape...) }

// Clone returns a deep copy.
func (t *Tensor) Clone() *Tensor {
	return &Tensor{Shape: append([]int(nil), t.Shape...), Data: append([]float32(nil), t.Data...)}
}

// Zero sets every element to 0.
func (t *Tensor) Zero() { clear(t.Data) }

// SameShape reports whether t and u have identical shapes.
func (t *Tensor) SameShape(u *Tensor) bool {
	if len(t.Shape) != len(u.Shape) {
		return false
	}
	for i := range t.Shape {
		if t.Shape[i] != u.Shape[i] {
			return false
		}
	}
	return true
}

// String describes the shape, not the values, so tensors can be logged cheaply.
func (t *Tensor) String() string {
	s := make([]string, len(t.Shape))
	for i, d := range t.Shape {
		s[i] = fmt.Sprint(d)
	}
	return "Tensor[" + strings.Join(s, "×") + "]"
}
