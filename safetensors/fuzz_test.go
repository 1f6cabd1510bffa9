package safetensors

import (
	"bytes"
	"encoding/binary"
	"reflect"
	"testing"
)

// FuzzRead checks that Read never panics or over-allocates on arbitrary
// bytes, and that whatever it accepts survives a write and a second read
// unchanged. The seed corpus runs in every `go test`; fuzz longer with
//
//	go test -run '^$' -fuzz FuzzRead ./safetensors/
func FuzzRead(f *testing.F) {
	seeds := [][]Tensor{
		nil,
		{New("a", []int{2, 2}, []float32{1, 2, 3, 4})},
		{New("w", []int{1}, []float64{1}), New("b", []int{3}, []uint8{1, 2, 3}), New("s", nil, []int32{-1})},
		{New("empty", []int{0}, []uint16{}), {Name: "h", DType: F16, Shape: []int{1}, Data: []byte{0, 60}}},
	}
	for _, s := range seeds {
		f.Add(encode(f, s, map[string]string{"format": "pt"}))
		f.Add(encode(f, s, nil))
	}
	f.Add(file(`{"a":{"dtype":"U8","shape":[8],"data_offsets":[0,8]},"b":{"dtype":"U8","shape":[4],"data_offsets":[4,8]}}`, make([]byte, 8)...))
	f.Add(file(`{"a":{"dtype":"F32","shape":[4294967296,4294967296,4],"data_offsets":[0,8]}}`, make([]byte, 8)...))
	f.Add(file(`{"__metadata__":{"a":"1","a":"2"}}`))
	f.Add(binary.LittleEndian.AppendUint64(nil, 1<<62))
	f.Fuzz(func(t *testing.T, b []byte) {
		got, err := decode(b)
		if err != nil {
			return
		}
		out := encode(t, got.Tensors, got.Metadata)
		again, err := decode(out)
		if err != nil {
			t.Fatalf("re-reading our own output failed: %v", err)
		}
		if len(got.Metadata) == 0 {
			got.Metadata = nil // an empty map is not written
		}
		if !reflect.DeepEqual(again, got) {
			t.Fatalf("round trip changed the file:\n%+v\n%+v", got, again)
		}
		if !bytes.Equal(encode(t, again.Tensors, again.Metadata), out) {
			t.Fatal("writing is not deterministic")
		}
	})
}
