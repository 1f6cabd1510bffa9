package safetensors

import (
	"bytes"
	"encoding/binary"
	"errors"
	"io"
	"math"
	"os"
	"path/filepath"
	"reflect"
	"runtime"
	"strings"
	"testing"

	"github.com/psclip/psclip/tensor"
)

func encode(t testing.TB, tensors []Tensor, metadata map[string]string) []byte {
	t.Helper()
	var b bytes.Buffer
	if err := Encode(&b, tensors, metadata); err != nil {
		t.Fatal(err)
	}
	return b.Bytes()
}

func decode(b []byte) (*File, error) { return Read(bytes.NewReader(b), int64(len(b))) }

// file builds a safetensors file by hand from a header string and data.
func file(header string, data ...byte) []byte {
	b := binary.LittleEndian.AppendUint64(nil, uint64(len(header)))
	return append(append(b, header...), data...)
}

func f32bytes(v ...float32) []byte {
	b, _ := binary.Append(nil, binary.LittleEndian, v)
	return b
}

// The expected bytes are those the reference implementation's own
// serialization tests pin down (safetensors/src/tensor.rs).
func TestEncodeMatchesReference(t *testing.T) {
	data := []float32{0, 1, 2, 3, 4, 5}
	tests := []struct {
		name     string
		tensors  []Tensor
		metadata map[string]string
		want     []byte
	}{
		{"one tensor, no padding", []Tensor{New("attn.0", []int{1, 2, 3}, data)}, nil,
			file(`{"attn.0":{"dtype":"F32","shape":[1,2,3],"data_offsets":[0,24]}}`, f32bytes(data...)...)},
		{"padding aligns the data", []Tensor{New("attn0", []int{1, 1, 2, 3}, data)}, nil,
			file(`{"attn0":{"dtype":"F32","shape":[1,1,2,3],"data_offsets":[0,24]}}       `, f32bytes(data...)...)},
		{"empty", nil, nil, file(`{}      `)},
		{"empty with metadata", nil, map[string]string{"framework": "pt"}, file(`{"__metadata__":{"framework":"pt"}}     `)},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := encode(t, tt.tensors, tt.metadata)
			if !bytes.Equal(got, tt.want) {
				t.Fatalf("Encode =\n%q\nwant\n%q", got, tt.want)
			}
			f, err := decode(got)
			if err != nil {
				t.Fatal(err)
			}
			if !reflect.DeepEqual(f.Tensors, tt.tensors) && len(tt.tensors) > 0 {
				t.Fatalf("read back %+v, want %+v", f.Tensors, tt.tensors)
			}
		})
	}
}

func TestEncodeOrdersByDTypeThenName(t *testing.T) {
	tensors := []Tensor{
		New("b", []int{3}, []uint8{1, 2, 3}),
		New("a", []int{1}, []float32{1}),
		New("c", []int{2}, []float64{1, 2}),
		New("a16", []int{1}, []uint16{7}),
		New("d", []int{1}, []int64{-1}),
		New("e", []int{1}, []float32{2}),
	}
	got := encode(t, tensors, map[string]string{"z": "1", "a": "<&>"})
	header := `{"__metadata__":{"a":"<&>","z":"1"},` +
		`"d":{"dtype":"I64","shape":[1],"data_offsets":[0,8]},` +
		`"c":{"dtype":"F64","shape":[2],"data_offsets":[8,24]},` +
		`"a":{"dtype":"F32","shape":[1],"data_offsets":[24,28]},` +
		`"e":{"dtype":"F32","shape":[1],"data_offsets":[28,32]},` +
		`"a16":{"dtype":"U16","shape":[1],"data_offsets":[32,34]},` +
		`"b":{"dtype":"U8","shape":[3],"data_offsets":[34,37]}}`
	header += strings.Repeat(" ", (8-len(header)%8)%8)
	if want := string(got[8 : 8+len(header)]); want != header {
		t.Fatalf("header\n%s\nwant\n%s", got[8:], header)
	}
	// Determinism: the input order must not matter.
	rev := make([]Tensor, len(tensors))
	for i, tt := range tensors {
		rev[len(tensors)-1-i] = tt
	}
	if again := encode(t, rev, map[string]string{"a": "<&>", "z": "1"}); !bytes.Equal(again, got) {
		t.Fatal("output depends on the input order")
	}
}

func TestRoundTrip(t *testing.T) {
	tensors := []Tensor{
		New("w", []int{2, 3}, []float32{1, -2, float32(math.Inf(1)), 3.5, 0, -0}),
		New("f64", []int{2}, []float64{math.Pi, -1e300}),
		New("i32", []int{1, 2}, []int32{math.MinInt32, 7}),
		New("i64", []int{3}, []int64{math.MaxInt64, 0, -5}),
		New("u8", []int{4}, []uint8{0, 1, 254, 255}),
		New("u16", []int{2}, []uint16{65535, 1}),
		New("scalar", nil, []float32{42}),
		New("empty", []int{0, 5}, []float32{}),
		{Name: "bf16", DType: BF16, Shape: []int{2}, Data: []byte{1, 2, 3, 4}},
	}
	path := filepath.Join(t.TempDir(), "x.safetensors")
	meta := map[string]string{"format": "pt"}
	if err := WriteFile(path, tensors, meta); err != nil {
		t.Fatal(err)
	}
	f, err := ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	if !reflect.DeepEqual(f.Metadata, meta) {
		t.Fatalf("metadata %v, want %v", f.Metadata, meta)
	}
	if len(f.Tensors) != len(tensors) {
		t.Fatalf("%d tensors, want %d", len(f.Tensors), len(tensors))
	}
	for _, want := range tensors {
		got, ok := f.Tensor(want.Name)
		if !ok {
			t.Fatalf("tensor %q missing", want.Name)
		}
		if got.DType != want.DType || !reflect.DeepEqual(got.Shape, want.Shape) && len(want.Shape) > 0 || !bytes.Equal(got.Data, want.Data) {
			t.Errorf("tensor %q = %+v, want %+v", want.Name, got, want)
		}
	}
	w, err := f.Float32("w")
	if err != nil {
		t.Fatal(err)
	}
	if want := tensor.From([]float32{1, -2, float32(math.Inf(1)), 3.5, 0, -0}, 2, 3); !reflect.DeepEqual(w, want) {
		t.Fatalf("Float32 = %v %v", w, w.Data)
	}
	i64, _ := f.Tensor("i64")
	if v, err := Values[int64](i64); err != nil || !reflect.DeepEqual(v, []int64{math.MaxInt64, 0, -5}) {
		t.Fatalf("Values[int64] = %v, %v", v, err)
	}
	if _, err := Values[int32](i64); err == nil {
		t.Fatal("Values of the wrong type must fail")
	}
	if _, err := f.Float32("f64"); err == nil {
		t.Fatal("Float32 of an F64 tensor must fail")
	}
	if _, err := f.Float32("nope"); err == nil {
		t.Fatal("Float32 of a missing tensor must fail")
	}
}

func TestEncodeRejects(t *testing.T) {
	ok := New("a", []int{1}, []float32{1})
	tests := []struct {
		name    string
		tensors []Tensor
		meta    map[string]string
		want    string
	}{
		{"duplicate", []Tensor{ok, ok}, nil, "duplicate tensor name"},
		{"reserved", []Tensor{{Name: "__metadata__", DType: U8, Shape: []int{0}}}, nil, "reserved"},
		{"unknown dtype", []Tensor{{Name: "x", DType: "F4", Shape: []int{0}}}, nil, "unknown dtype"},
		{"short data", []Tensor{{Name: "x", DType: F32, Shape: []int{2}, Data: make([]byte, 7)}}, nil, "needs 8"},
		{"negative dim", []Tensor{{Name: "x", DType: F32, Shape: []int{-1}}}, nil, "negative"},
		{"bad utf-8 name", []Tensor{{Name: "\xff", DType: U8, Shape: []int{0}}}, nil, "UTF-8"},
		{"bad utf-8 metadata", nil, map[string]string{"k": "\xff"}, "UTF-8"},
	}
	for _, tt := range tests {
		var b bytes.Buffer
		err := Encode(&b, tt.tensors, tt.meta)
		if err == nil || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want it to mention %q", tt.name, err, tt.want)
		}
		if b.Len() != 0 {
			t.Errorf("%s: %d bytes written before the error", tt.name, b.Len())
		}
	}
}

func TestReadRejects(t *testing.T) {
	d8 := make([]byte, 8)
	tests := []struct {
		name string
		file []byte
		want string
	}{
		{"empty file", nil, "shorter than the 8-byte"},
		{"header beyond file", append(binary.LittleEndian.AppendUint64(nil, 100), "{}"...), "exceeds the 2 bytes"},
		{"header above limit", binary.LittleEndian.AppendUint64(nil, MaxHeaderSize+1), "limit"},
		{"header 2^64-1", binary.LittleEndian.AppendUint64(nil, math.MaxUint64), "limit"},
		{"not utf-8", file("{\"\xff\":1}"), "UTF-8"},
		{"not an object", file(`[]`), "start with '{'"},
		{"leading space", file(` {}`), "start with '{'"},
		{"malformed json", file(`{"a":`), "not an object"},
		{"unterminated", file(`{"a":{"dtype":"F32","shape":[0],"data_offsets":[0,0]}`), "header: EOF"},
		{"trailing garbage", file(`{} x`), "after the JSON object"},
		{"two objects", file(`{}{}`), "after the JSON object"},
		{"duplicate tensor", file(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]},"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0]}}`), `duplicate entry "a"`},
		{"duplicate field", file(`{"a":{"dtype":"U8","dtype":"U8","shape":[0],"data_offsets":[0,0]}}`), `duplicate field "dtype"`},
		{"field case", file(`{"a":{"DTYPE":"U8","shape":[0],"data_offsets":[0,0]}}`), `unknown field "DTYPE"`},
		{"unknown field", file(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[0,0],"x":1}}`), `unknown field "x"`},
		{"unknown dtype", file(`{"a":{"dtype":"F128","shape":[1],"data_offsets":[0,16]}}`, make([]byte, 16)...), `unknown dtype "F128"`},
		{"dtype not string", file(`{"a":{"dtype":4,"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)...), "dtype is not a string"},
		{"missing dtype", file(`{"a":{"shape":[1],"data_offsets":[0,4]}}`, make([]byte, 4)...), "no dtype"},
		{"missing shape", file(`{"a":{"dtype":"F32","data_offsets":[0,4]}}`, make([]byte, 4)...), "no shape"},
		{"missing offsets", file(`{"a":{"dtype":"F32","shape":[1]}}`, make([]byte, 4)...), "data_offsets must be"},
		{"three offsets", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,4,8]}}`, make([]byte, 4)...), "data_offsets must be"},
		{"float dim", file(`{"a":{"dtype":"F32","shape":[1.0],"data_offsets":[0,4]}}`, make([]byte, 4)...), "not a 64-bit integer"},
		{"huge offset", file(`{"a":{"dtype":"F32","shape":[1],"data_offsets":[0,99999999999999999999]}}`), "not a 64-bit integer"},
		{"negative dim", file(`{"a":{"dtype":"F32","shape":[-1],"data_offsets":[0,4]}}`, make([]byte, 4)...), "bad dimension -1"},
		{"reversed offsets", file(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[4,0]}}`), "bad data_offsets"},
		{"negative offset", file(`{"a":{"dtype":"U8","shape":[0],"data_offsets":[-1,-1]}}`), "bad data_offsets"},
		{"shape mismatch", file(`{"a":{"dtype":"F32","shape":[3],"data_offsets":[0,8]}}`, d8...), "does not fit"},
		{"dtype mismatch", file(`{"a":{"dtype":"F64","shape":[2],"data_offsets":[0,8]}}`, d8...), "does not fit"},
		{"scalar needs one element", file(`{"a":{"dtype":"U8","shape":[],"data_offsets":[0,0]}}`), "does not fit"},
		{"shape overflows int64", file(`{"a":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}}`, d8...), "does not fit"},
		{"gap", file(`{"a":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}`, d8...), "gap"},
		{"overlap", file(`{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}`, d8...), "overlap"},
		{"same range twice", file(`{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[8],"data_offsets":[0,8]}}`, d8...), "overlap"},
		{"offset past file", file(`{"a":{"dtype":"U8","shape":[16],"data_offsets":[0,16]}}`, d8...), "header describes 16 data bytes but the file holds 8"},
		{"trailing bytes", file(`{"a":{"dtype":"U8","shape":[4],"data_offsets":[0,4]}}`, d8...), "holds 8"},
		{"metadata not object", file(`{"__metadata__":[]}`), "__metadata__ is not an object"},
		{"metadata not string", file(`{"__metadata__":{"a":1}}`), `value of "a" is not a string`},
		{"metadata duplicate", file(`{"__metadata__":{"a":"1","a":"2"}}`), `duplicate __metadata__ key "a"`},
		{"metadata twice", file(`{"__metadata__":{},"__metadata__":{}}`), "duplicate entry"},
	}
	for _, tt := range tests {
		_, err := decode(tt.file)
		var fe *FormatError
		if !errors.As(err, &fe) || !strings.Contains(err.Error(), tt.want) {
			t.Errorf("%s: err = %v, want a FormatError mentioning %q", tt.name, err, tt.want)
		}
	}
}

func TestReadFileNamesTheFile(t *testing.T) {
	path := filepath.Join(t.TempDir(), "bad.safetensors")
	if err := os.WriteFile(path, file(`{"a":1}`), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, read := range []func(string) (*File, error){ReadFile, ReadHeader} {
		_, err := read(path)
		if err == nil || !strings.HasPrefix(err.Error(), "safetensors: "+path+": ") {
			t.Errorf("err = %v, want it to start with the path", err)
		}
	}
	_, err := ReadFile(filepath.Join(t.TempDir(), "missing"))
	if !errors.Is(err, os.ErrNotExist) {
		t.Errorf("missing file: err = %v, want ErrNotExist", err)
	}
}

func TestReadHeaderSkipsData(t *testing.T) {
	path := filepath.Join(t.TempDir(), "x.safetensors")
	if err := WriteFile(path, []Tensor{New("a", []int{2}, []int32{1, 2})}, nil); err != nil {
		t.Fatal(err)
	}
	f, err := ReadHeader(path)
	if err != nil {
		t.Fatal(err)
	}
	if len(f.Tensors) != 1 || f.Tensors[0].Data != nil || f.Tensors[0].DType != I32 {
		t.Fatalf("ReadHeader = %+v", f.Tensors)
	}
	// A truncated file is caught by the size check without reading the data.
	b, _ := os.ReadFile(path)
	os.WriteFile(path, b[:len(b)-1], 0o644)
	if _, err := ReadHeader(path); err == nil || !strings.Contains(err.Error(), "truncated") {
		t.Fatalf("truncated: err = %v", err)
	}
}

// hugeReader claims a size far beyond what it holds; reading beyond the
// header fails the test.
type hugeReader struct {
	t      *testing.T
	header []byte
}

func (r hugeReader) ReadAt(p []byte, off int64) (int, error) {
	if off+int64(len(p)) > int64(len(r.header)) {
		r.t.Fatalf("read of %d bytes at %d: the reader went past the header", len(p), off)
	}
	return copy(p, r.header[off:]), nil
}

// Sizes claimed by a header are checked against the file before anything of
// that size is allocated: the allocations stay tiny whatever the claim.
func TestAbsurdClaimsRejectedBeforeAllocating(t *testing.T) {
	const tb = 1 << 40
	huge := file(`{"a":{"dtype":"U8","shape":[1099511627776],"data_offsets":[0,1099511627776]}}`)
	claims := []struct {
		name string
		r    io.ReaderAt
		size int64
	}{
		{"header length 2^62 in a 16-byte file", bytes.NewReader(binary.LittleEndian.AppendUint64(nil, 1<<62)), 16},
		{"header length 90 MB in a 1 kB file", bytes.NewReader(binary.LittleEndian.AppendUint64(nil, 90e6)), 1024},
		{"tensor of 2^60 bytes in a small file", bytes.NewReader(file(`{"a":{"dtype":"U8","shape":[1152921504606846976],"data_offsets":[0,1152921504606846976]}}`)), -1},
		{"tensor of 1 TB in a file one byte short of it", hugeReader{t, huge}, int64(len(huge)) + tb - 1},
	}
	for _, c := range claims {
		size := c.size
		if size < 0 {
			size = int64(c.r.(*bytes.Reader).Len())
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := Read(c.r, size)
		runtime.ReadMemStats(&after)
		if err == nil {
			t.Errorf("%s: accepted", c.name)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: allocated %d bytes before rejecting", c.name, got)
		}
	}
}
