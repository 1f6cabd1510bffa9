package safetensors

import (
	"bufio"
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"fmt"
	"io"
	"os"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/tensor"
)

// WriteFile atomically replaces path with a safetensors file holding the
// tensors and, if not empty, the metadata. See Encode for the layout.
func WriteFile(path string, tensors []Tensor, metadata map[string]string) error {
	return atomicfile.Write(path, func(f *os.File) error {
		w := bufio.NewWriterSize(f, 1<<20)
		if err := Encode(w, tensors, metadata); err != nil {
			return err
		}
		return w.Flush()
	})
}

// Encode writes a safetensors file holding the tensors and, if not empty,
// the metadata to w, laid out as the reference implementation lays it out
// (see the package documentation). It returns an error, before writing
// anything, for tensors whose data do not match their dtype and shape, for
// duplicate or reserved names and for strings that are not valid UTF-8.
func Encode(w io.Writer, tensors []Tensor, metadata map[string]string) error {
	header, order, err := encodeHeader(tensors, metadata)
	if err != nil {
		return err
	}
	if _, err := w.Write(header); err != nil {
		return err
	}
	for _, i := range order {
		if _, err := w.Write(tensors[i].Data); err != nil {
			return err
		}
	}
	return nil
}

// encodeHeader returns the length field and the padded JSON header, and the
// order in which the tensors' data follow it.
func encodeHeader(tensors []Tensor, metadata map[string]string) ([]byte, []int, error) {
	order := make([]int, len(tensors))
	for i, t := range tensors {
		if err := check(t); err != nil {
			return nil, nil, err
		}
		order[i] = i
	}
	slices.SortFunc(order, func(i, j int) int {
		a, b := tensors[i], tensors[j]
		return cmp.Or(cmp.Compare(b.DType.rank(), a.DType.rank()), cmp.Compare(a.Name, b.Name))
	})
	for k := 1; k < len(order); k++ {
		if name := tensors[order[k]].Name; name == tensors[order[k-1]].Name {
			return nil, nil, fmt.Errorf("safetensors: duplicate tensor name %q", name)
		}
	}

	var h bytes.Buffer
	h.Write(make([]byte, 8)) // the length, filled in below
	h.WriteByte('{')
	if len(metadata) > 0 {
		keys := make([]string, 0, len(metadata))
		for k, v := range metadata {
			if !utf8.ValidString(k) || !utf8.ValidString(v) {
				return nil, nil, fmt.Errorf("safetensors: metadata %q is not valid UTF-8", k)
			}
			keys = append(keys, k)
		}
		slices.Sort(keys)
		h.WriteString(`"__metadata__":{`)
		for i, k := range keys {
			if i > 0 {
				h.WriteByte(',')
			}
			writeString(&h, k)
			h.WriteByte(':')
			writeString(&h, metadata[k])
		}
		h.WriteByte('}')
	}
	var offset int
	for n, i := range order {
		t := tensors[i]
		if n > 0 || len(metadata) > 0 {
			h.WriteByte(',')
		}
		writeString(&h, t.Name)
		h.WriteString(`:{"dtype":`)
		writeString(&h, string(t.DType))
		h.WriteString(`,"shape":[`)
		for k, d := range t.Shape {
			if k > 0 {
				h.WriteByte(',')
			}
			h.WriteString(strconv.Itoa(d))
		}
		fmt.Fprintf(&h, `],"data_offsets":[%d,%d]}`, offset, offset+len(t.Data))
		offset += len(t.Data)
	}
	h.WriteByte('}')
	for h.Len()%8 != 0 {
		h.WriteByte(' ')
	}
	b := h.Bytes()
	binary.LittleEndian.PutUint64(b, uint64(len(b)-8))
	return b, order, nil
}

// check validates one tensor for writing.
func check(t Tensor) error {
	switch {
	case t.Name == "__metadata__":
		return fmt.Errorf("safetensors: %q is reserved and cannot name a tensor", t.Name)
	case !utf8.ValidString(t.Name):
		return fmt.Errorf("safetensors: tensor name %q is not valid UTF-8", t.Name)
	case t.DType.Size() == 0:
		return fmt.Errorf("safetensors: tensor %q: unknown dtype %q", t.Name, t.DType)
	}
	for _, d := range t.Shape {
		if d < 0 {
			return fmt.Errorf("safetensors: tensor %q: negative dimension in shape %v", t.Name, t.Shape)
		}
	}
	if want := tensor.Numel(t.Shape) * t.DType.Size(); len(t.Data) != want {
		return fmt.Errorf("safetensors: tensor %q: %d data bytes, but shape %v of %s needs %d", t.Name, len(t.Data), t.Shape, t.DType, want)
	}
	return nil
}

// writeString writes s as a JSON string, escaping only what JSON requires
// (as the reference's serde_json does), not HTML characters.
func writeString(b *bytes.Buffer, s string) {
	e := json.NewEncoder(b)
	e.SetEscapeHTML(false)
	e.Encode(s)             // cannot fail for a string
	b.Truncate(b.Len() - 1) // Encode's newline
}
