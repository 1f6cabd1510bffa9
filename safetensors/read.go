package safetensors

import (
	"bytes"
	"cmp"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"slices"
	"strconv"
	"unicode/utf8"

	"github.com/psclip/psclip/internal/regfile"
)

// MaxHeaderSize is the largest header accepted, as in the reference
// implementation: a larger length field means a corrupt or hostile file.
const MaxHeaderSize = 100_000_000

// ReadFile reads and validates the safetensors file at path.
func ReadFile(path string) (*File, error) {
	return readFile(path, true)
}

// ReadHeader reads and validates the header of the file at path, and checks
// that the file is exactly as long as the header says, without reading the
// data: the returned tensors have nil Data.
func ReadHeader(path string) (*File, error) {
	return readFile(path, false)
}

func readFile(path string, data bool) (*File, error) {
	f, size, err := regfile.Open(path) // a FIFO is refused, never waited on
	if err != nil {
		return nil, err
	}
	defer f.Close()
	file, err := read(f, size, data)
	var fe *FormatError
	if errors.As(err, &fe) {
		fe.File = path
	} else if err != nil {
		err = fmt.Errorf("safetensors: %s: %w", path, err)
	}
	return file, err
}

// Read reads and validates a safetensors file of the given size from r.
// Tensor data share one buffer of the data's size, allocated only after the
// header has been validated against size.
func Read(r io.ReaderAt, size int64) (*File, error) {
	return read(r, size, true)
}

func read(r io.ReaderAt, size int64, withData bool) (*File, error) {
	if size < 8 {
		return nil, formatErr("file is %d bytes, shorter than the 8-byte header length", size)
	}
	var lenBuf [8]byte
	if err := readAt(r, lenBuf[:], 0); err != nil {
		return nil, err
	}
	n := binary.LittleEndian.Uint64(lenBuf[:])
	if n > MaxHeaderSize {
		return nil, formatErr("header length %d exceeds the %d-byte limit", n, MaxHeaderSize)
	}
	if n > uint64(size-8) {
		return nil, formatErr("header length %d exceeds the %d bytes after the length field (truncated file?)", n, size-8)
	}
	header := make([]byte, n)
	if err := readAt(r, header, 8); err != nil {
		return nil, err
	}
	f, entries, dataLen, err := parseHeader(header)
	if err != nil {
		return nil, err
	}
	start := 8 + int64(n)
	if have := size - start; have != dataLen {
		return nil, formatErr("header describes %d data bytes but the file holds %d (truncated or trailing bytes?)", dataLen, have)
	}
	if !withData {
		return f, nil
	}
	buf := make([]byte, dataLen)
	if err := readAt(r, buf, start); err != nil {
		return nil, err
	}
	for i, e := range entries {
		f.Tensors[i].Data = buf[e.begin:e.end:e.end]
	}
	return f, nil
}

// readAt fills p from r at off. io.ReaderAt may report io.EOF along with a
// full read that ends at the end of the input; that is a success.
func readAt(r io.ReaderAt, p []byte, off int64) error {
	n, err := r.ReadAt(p, off)
	if n == len(p) {
		return nil
	}
	return err
}

// entry is a tensor of the header and its byte range in the data buffer.
type entry struct {
	Tensor
	begin, end int64
}

// parseHeader decodes and validates the JSON header. It returns the file with
// tensors sorted by name and without data, each tensor's byte range, and the
// length of the data buffer they tile.
func parseHeader(h []byte) (*File, []entry, int64, error) {
	if !utf8.Valid(h) {
		return nil, nil, 0, formatErr("header is not valid UTF-8")
	}
	if len(h) == 0 || h[0] != '{' {
		return nil, nil, 0, formatErr("header does not start with '{'")
	}
	dec := json.NewDecoder(bytes.NewReader(h))
	dec.UseNumber()
	dec.Token() // the '{' checked above
	f := &File{}
	var entries []entry
	seen := map[string]bool{}
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return nil, nil, 0, err
		}
		if seen[key] {
			return nil, nil, 0, formatErr("header: duplicate entry %q", key)
		}
		seen[key] = true
		if key == "__metadata__" {
			if f.Metadata, err = parseMetadata(dec); err != nil {
				return nil, nil, 0, err
			}
			continue
		}
		e, err := parseTensor(dec, key)
		if err != nil {
			return nil, nil, 0, err
		}
		entries = append(entries, e)
	}
	if _, err := dec.Token(); err != nil { // the closing '}'
		return nil, nil, 0, formatErr("header: %v", err)
	}
	if rest := h[dec.InputOffset():]; len(bytes.TrimLeft(rest, " \t\r\n")) != 0 {
		return nil, nil, 0, formatErr("header: unexpected bytes after the JSON object")
	}
	dataLen, err := checkOffsets(entries)
	if err != nil {
		return nil, nil, 0, err
	}
	slices.SortFunc(entries, func(a, b entry) int { return cmp.Compare(a.Name, b.Name) })
	f.Tensors = make([]Tensor, len(entries))
	for i, e := range entries {
		f.Tensors[i] = e.Tensor
	}
	return f, entries, dataLen, nil
}
func stringToken(dec *json.Decoder) (string, error) {
	tok, err := dec.Token()
	if err != nil {
		return "", formatErr("header: %v", err)
	}
	s, ok := tok.(string)
	if !ok {
		return "", formatErr("header: expected a string, found %v", tok)
	}
	return s, nil
}

func parseMetadata(dec *json.Decoder) (map[string]string, error) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return nil, formatErr("header: __metadata__ is not an object of strings")
	}
	m := map[string]string{}
	for dec.More() {
		k, err := stringToken(dec)
		if err != nil {
			return nil, err
		}
		if _, dup := m[k]; dup {
			return nil, formatErr("header: duplicate __metadata__ key %q", k)
		}
		v, err := stringToken(dec)
		if err != nil {
			return nil, formatErr("header: __metadata__ value of %q is not a string", k)
		}
		m[k] = v
	}
	if _, err := dec.Token(); err != nil {
		return nil, formatErr("header: %v", err)
	}
	return m, nil
}

// parseTensor reads a tensor's header entry. It parses the object token by
// token because encoding/json matches field names case-insensitively and
// lets a repeated field overwrite the first.
func parseTensor(dec *json.Decoder, name string) (entry, error) {
	bad := func(format string, args ...any) (entry, error) {
		return entry{}, formatErr("tensor %q: "+format, append([]any{name}, args...)...)
	}
	if tok, err := dec.Token(); err != nil || tok != json.Delim('{') {
		return bad("entry is not an object")
	}
	var (
		dtype          *string
		shape, offsets []int64
		err            error
	)
	for dec.More() {
		key, err := stringToken(dec)
		if err != nil {
			return entry{}, err
		}
		dup := false
		switch key {
		case "dtype":
			dup = dtype != nil
			var s string
			if s, err = stringToken(dec); err != nil {
				return bad("dtype is not a string")
			}
			dtype = &s
		case "shape":
			dup = shape != nil
			if shape, err = intArray(dec); err != nil {
				return bad("shape: %v", err)
			}
		case "data_offsets":
			dup = offsets != nil
			if offsets, err = intArray(dec); err != nil {
				return bad("data_offsets: %v", err)
			}
		default:
			return bad("unknown field %q", key)
		}
		if dup {
			return bad("duplicate field %q", key)
		}
	}
	if _, err = dec.Token(); err != nil {
		return entry{}, formatErr("header: %v", err)
	}
	switch {
	case dtype == nil:
		return bad("no dtype")
	case shape == nil:
		return bad("no shape")
	case len(offsets) != 2:
		return bad("data_offsets must be [begin, end]")
	}
	e := entry{Tensor: Tensor{Name: name, DType: DType(*dtype), Shape: make([]int, len(shape))}}
	size := int64(e.DType.Size())
	if size == 0 {
		return bad("unknown dtype %q", *dtype)
	}
	e.begin, e.end = offsets[0], offsets[1]
	if e.begin < 0 || e.end < e.begin {
		return bad("bad data_offsets [%d, %d]", e.begin, e.end)
	}
	// Count elements only up to what the byte range can hold, so that a
	// huge shape cannot overflow: more is a mismatch however large.
	limit := (e.end - e.begin) / size
	numel := int64(1)
	for i, d := range shape {
		if d < 0 || int64(int(d)) != d {
			return bad("bad dimension %d in shape %v", d, shape)
		}
		e.Shape[i] = int(d)
		switch {
		case d == 0:
			numel = 0
		case numel > limit/d:
			numel = limit + 1
		default:
			numel *= d
		}
	}
	if numel*size != e.end-e.begin {
		return bad("shape %v of %s does not fit data_offsets [%d, %d] (%d bytes)", e.Shape, e.DType, e.begin, e.end, e.end-e.begin)
	}
	return e, nil
}

// intArray reads a JSON array of integers; the decoder must use UseNumber.
func intArray(dec *json.Decoder) ([]int64, error) {
	if tok, err := dec.Token(); err != nil || tok != json.Delim('[') {
		return nil, errors.New("not an array")
	}
	a := []int64{}
	for dec.More() {
		tok, err := dec.Token()
		if err != nil {
			return nil, err
		}
		num, ok := tok.(json.Number)
		if !ok {
			return nil, fmt.Errorf("%v is not an integer", tok)
		}
		v, err := strconv.ParseInt(string(num), 10, 64)
		if err != nil {
			return nil, fmt.Errorf("%s is not a 64-bit integer", num)
		}
		a = append(a, v)
	}
	if _, err := dec.Token(); err != nil {
		return nil, err
	}
	return a, nil
}

// checkOffsets checks that the entries tile [0, end) without gaps or
// overlaps and returns end.
func checkOffsets(entries []entry) (int64, error) {
	byOffset := slices.Clone(entries)
	slices.SortFunc(byOffset, func(a, b entry) int {
		return cmp.Or(cmp.Compare(a.begin, b.begin), cmp.Compare(a.end, b.end))
	})
	var end int64
	for i, e := range byOffset {
		if e.begin != end {
			if e.begin < end {
				p := byOffset[i-1]
				return 0, formatErr("tensor %q: data_offsets [%d, %d] overlap tensor %q's [%d, %d]",
					e.Name, e.begin, e.end, p.Name, p.begin, p.end)
			}
			return 0, formatErr("tensor %q: data_offsets [%d, %d] leave a gap after byte %d", e.Name, e.begin, e.end, end)
		}
		end = e.end
	}
	return end, nil
}
