// Package safetensors reads and writes tensor files in the safetensors format
// of Hugging Face (https://github.com/huggingface/safetensors), the format
// PyTorch, JAX and most model hubs exchange weights in. A file is
//
//	8 bytes   N, the header length, little-endian uint64
//	N bytes   a JSON object: for every tensor
//	          "name": {"dtype": "F32", "shape": [2, 3], "data_offsets": [begin, end]}
//	          and optionally "__metadata__": {"key": "value", ...}
//	rest      the data buffer; a tensor's little-endian, row-major elements
//	          lie at [begin, end) of it
//
// WriteFile and Encode produce the bytes the reference implementation
// produces: tensors ordered by descending dtype (so that every tensor's data is
// aligned to its element size) and then by name, compact JSON with
// "__metadata__" first, offsets contiguous from 0, and the header padded with
// spaces to a multiple of 8 bytes. A file with tensors of one dtype is
// therefore ordered by name. Metadata keys are written sorted, so output is
// deterministic.
//
// ReadFile and Read validate strictly and reject, with an error naming the
// file and the problem and before allocating for the claim: a header length
// beyond the file or above 100 MB (the reference limit), a header that is not
// a UTF-8 JSON object, duplicate names, unknown dtypes or fields, negative
// dimensions, offsets that are reversed, out of range, overlapping or leave
// gaps, and a byte range that does not match shape × dtype size.
//
// Tensors hold raw bytes; New and Values convert from and to Go slices, and
// File.Float32 gives a tensor.Tensor.
package safetensors

import (
	"encoding/binary"
	"fmt"
	"slices"
	"strings"

	"github.com/psclip/psclip/tensor"
)

// DType is an element type, named as in the file format.
type DType string

// The element types. Only their sizes matter to this package; New and Values
// convert the numeric ones from and to Go types, and the others (BOOL, F16,
// BF16, F8_*) are carried as raw bytes.
const (
	BOOL    DType = "BOOL"
	U8      DType = "U8"
	I8      DType = "I8"
	F8E5M2  DType = "F8_E5M2"
	F8E4M3  DType = "F8_E4M3"
	I16     DType = "I16"
	U16     DType = "U16"
	F16     DType = "F16"
	BF16    DType = "BF16"
	I32     DType = "I32"
	U32     DType = "U32"
	F32     DType = "F32"
	F64     DType = "F64"
	I64     DType = "I64"
	U64     DType = "U64"
	invalid DType = ""
)

// dtypes lists the element types in the reference implementation's order,
// which sorts the data buffer (descending) so that larger elements come first.
var dtypes = []DType{BOOL, U8, I8, F8E5M2, F8E4M3, I16, U16, F16, BF16, I32, U32, F32, F64, I64, U64}

// rank is d's position in dtypes, or -1 for an unknown type.
func (d DType) rank() int { return slices.Index(dtypes, d) }

// Size is the size of one element in bytes, or 0 for an unknown type.
func (d DType) Size() int {
	switch d {
	case BOOL, U8, I8, F8E5M2, F8E4M3:
		return 1
	case I16, U16, F16, BF16:
		return 2
	case I32, U32, F32:
		return 4
	case F64, I64, U64:
		return 8
	}
	return 0
}

// Tensor is one named tensor of a file.
type Tensor struct {
	Name  string
	DType DType
	Shape []int
	// Data holds the elements, little-endian and row-major;
	// len(Data) = numel(Shape) × DType.Size().
	Data []byte
}

// Number is the set of Go element types New and Values convert.
type Number interface {
	uint8 | int8 | uint16 | int16 | uint32 | int32 | uint64 | int64 | float32 | float64
}

// DTypeOf is the dtype that holds elements of type T.
func DTypeOf[T Number]() DType {
	var z T
	switch any(z).(type) {
	case uint8:
		return U8
	case int8:
		return I8
	case uint16:
		return U16
	case int16:
		return I16
	case uint32:
		return U32
	case int32:
		return I32
	case uint64:
		return U64
	case int64:
		return I64
	case float32:
		return F32
	case float64:
		return F64
	}
	panic("unreachable")
}

// New returns a tensor holding a little-endian copy of data. It panics if
// len(data) does not match shape, as tensor.From does.
func New[T Number](name string, shape []int, data []T) Tensor {
	if n := tensor.Numel(shape); n != len(data) {
		panic(fmt.Sprintf("safetensors: %d elements do not fit shape %v of %q", len(data), shape, name))
	}
	buf, err := binary.Append(nil, binary.LittleEndian, data)
	if err != nil {
		panic(err) // unreachable: every Number has a fixed size
	}
	return Tensor{Name: name, DType: DTypeOf[T](), Shape: slices.Clone(shape), Data: buf}
}

// FromTensor returns an F32 tensor holding a copy of t.
func FromTensor(name string, t *tensor.Tensor) Tensor { return New(name, t.Shape, t.Data) }

// Values decodes t's elements into a new slice. It is an error if t's dtype
// is not the one that holds T.
func Values[T Number](t Tensor) ([]T, error) {
	if want := DTypeOf[T](); t.DType != want {
		return nil, fmt.Errorf("safetensors: tensor %q is %s, not %s", t.Name, t.DType, want)
	}
	out := make([]T, len(t.Data)/t.DType.Size())
	if _, err := binary.Decode(t.Data, binary.LittleEndian, out); err != nil {
		return nil, fmt.Errorf("safetensors: tensor %q: %v", t.Name, err)
	}
	return out, nil
}

// File is the content of a safetensors file.
type File struct {
	// Metadata is the "__metadata__" map; nil when the file has none.
	Metadata map[string]string
	// Tensors are sorted by name.
	Tensors []Tensor
}

// Tensor returns the tensor with the given name.
func (f *File) Tensor(name string) (Tensor, bool) {
	i, ok := slices.BinarySearchFunc(f.Tensors, name, func(t Tensor, name string) int { return strings.Compare(t.Name, name) })
	if !ok {
		return Tensor{}, false
	}
	return f.Tensors[i], true
}

// Float32 returns the F32 tensor with the given name as a tensor.Tensor.
func (f *File) Float32(name string) (*tensor.Tensor, error) {
	t, ok := f.Tensor(name)
	if !ok {
		return nil, fmt.Errorf("safetensors: no tensor %q", name)
	}
	data, err := Values[float32](t)
	if err != nil {
		return nil, err
	}
	return tensor.From(data, t.Shape...), nil
}

// FormatError reports a file that is not valid safetensors.
type FormatError struct {
	// File is the file's path, or empty when the bytes did not come from
	// a named file.
	File string
	// Problem says what is wrong.
	Problem string
}

func (e *FormatError) Error() string {
	if e.File == "" {
		return "safetensors: " + e.Problem
	}
	return "safetensors: " + e.File + ": " + e.Problem
}

func formatErr(format string, args ...any) error {
	return &FormatError{Problem: fmt.Sprintf(format, args...)}
}
