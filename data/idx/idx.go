package idx

import (
	"bufio"
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"fmt"
	"io"

	"github.com/psclip/psclip/internal/regfile"
)

// MaxBytes caps the number of elements one file may claim (Fashion-MNIST's
// training images are 47 MB). A larger claim is refused before anything is
// allocated for it.
const MaxBytes = 1 << 30

// maxDims caps the number of dimensions a file may declare; MNIST's files
// have one (labels) or three (images).
const maxDims = 4

// maxDeflateRatio bounds how many bytes deflate can produce per byte of
// input: a 258-byte match costs at least 2 bits, hence 1032:1.
const maxDeflateRatio = 1032

// unsignedByte is the IDX element-type code of uint8 elements.
const unsignedByte = 0x08

// ErrTruncated is wrapped by the errors for files that end before the
// elements their header claims.
var ErrTruncated = errors.New("truncated")

// Error is a fault in an IDX file.
type Error struct {
	File   string // the file, as named to ReadFile or Decode
	Offset int64  // the byte offset of the fault
	Gzip   bool   // Offset counts bytes of the decompressed data
	Err    error  // what is wrong; ErrTruncated for a short file
}

func (e *Error) Error() string {
	where := fmt.Sprintf("offset %d", e.Offset)
	if e.Gzip {
		where += " of the decompressed data"
	}
	return fmt.Sprintf("idx: %s: %s: %v", e.File, where, e.Err)
}

func (e *Error) Unwrap() error { return e.Err }

// Array is the content of one IDX file of unsigned bytes.
type Array struct {
	// Dims are the dimensions, outermost first: Dims[0] is the number of
	// items (images or labels).
	Dims []int
	// Data holds the product of Dims elements in row-major order.
	Data []byte
}

// ReadFile reads one IDX file of unsigned bytes, raw or gzip-compressed,
// with the checks of the package documentation. A path that is not a
// regular file (a FIFO, a directory) is refused without opening it.
func ReadFile(path string) (*Array, error) {
	f, size, err := regfile.Open(path)
	if err != nil {
		return nil, fmt.Errorf("idx: %w", err)
	}
	defer f.Close()
	return read(path, f, size)
}

// Decode parses a whole IDX file held in memory, raw or gzip-compressed;
// name is used in errors. It applies the same checks as ReadFile.
func Decode(name string, data []byte) (*Array, error) {
	return read(name, bytes.NewReader(data), int64(len(data)))
}

// read parses the size bytes of r.
func read(name string, r io.Reader, size int64) (*Array, error) {
	br := bufio.NewReaderSize(r, 1<<16)
	magic, _ := br.Peek(2)
	gz := len(magic) == 2 && magic[0] == 0x1f && magic[1] == 0x8b
	fail := func(off int64, format string, args ...any) error {
		return &Error{File: name, Offset: off, Gzip: gz, Err: fmt.Errorf(format, args...)}
	}
	var src io.Reader = br
	capacity := size // the most bytes the decoded data can hold
	if gz {
		z, err := gzip.NewReader(br)
		if err != nil {
			return nil, &Error{File: name, Err: fmt.Errorf("not a valid gzip file: %w", err)}
		}
		defer z.Close()
		src, capacity = z, size*maxDeflateRatio
	}
	var off int64 // bytes of decoded data consumed
	readFull := func(buf []byte, what string) error {
		n, err := io.ReadFull(src, buf)
		off += int64(n)
		switch {
		case errors.Is(err, io.EOF) || errors.Is(err, io.ErrUnexpectedEOF):
			return fail(off, "%w: the file ends inside the %s", ErrTruncated, what)
		case err != nil:
			return fail(off, "%w", err)
		}
		return nil
	}
	var head [4]byte
	if err := readFull(head[:], "magic number"); err != nil {
		return nil, err
	}
	switch {
	case head[0] != 0 || head[1] != 0:
		return nil, fail(0, "magic number %#08x is not an IDX file's (it starts with two zero bytes)", binary.BigEndian.Uint32(head[:]))
	case head[2] != unsignedByte:
		return nil, fail(2, "element type %#02x, want unsigned bytes (0x08)", head[2])
	case head[3] < 1 || head[3] > maxDims:
		return nil, fail(3, "%d dimensions, want 1 to %d", head[3], maxDims)
	}
	dims := make([]int, head[3])
	raw := make([]byte, 4*len(dims))
	if err := readFull(raw, "dimensions"); err != nil {
		return nil, err
	}
	elems := int64(1)
	for i := range dims {
		d := int64(binary.BigEndian.Uint32(raw[4*i:]))
		if d < 1 {
			return nil, fail(int64(4+4*i), "dimension %d is 0", i)
		}
		if elems *= d; elems > MaxBytes {
			return nil, fail(int64(4+4*i), "dimensions %v claim more than %d elements", dimsOf(raw), MaxBytes)
		}
		dims[i] = int(d)
	}
	want := off + elems // the decoded data's length the header claims
	switch {
	case !gz && size < want:
		return nil, fail(size, "%w: the file has %d bytes; its header claims %d (dimensions %v)", ErrTruncated, size, want, dims)
	case !gz && size > want:
		return nil, fail(want, "%d bytes after the elements the header claims (dimensions %v)", size-want, dims)
	case gz && want > capacity:
		return nil, fail(4, "%w: the header claims %d bytes (dimensions %v), more than a %d-byte gzip file can hold", ErrTruncated, want, dims, size)
	}
	a := &Array{Dims: dims, Data: make([]byte, elems)}
	if err := readFull(a.Data, "elements"); err != nil {
		return nil, err
	}
	if gz {
		// Reading on to the end verifies the checksum and finds trailing data.
		var b [1]byte
		switch _, err := io.ReadFull(src, b[:]); {
		case err == nil:
			return nil, fail(want, "data after the elements the header claims (dimensions %v)", dims)
		case errors.Is(err, io.ErrUnexpectedEOF):
			return nil, fail(want, "%w: the gzip stream ends before its checksum", ErrTruncated)
		case err != io.EOF:
			return nil, fail(want, "%w", err)
		}
	}
	return a, nil
}

// dimsOf decodes raw big-endian dimensions for a message.
func dimsOf(raw []byte) []uint32 {
	d := make([]uint32, len(raw)/4)
	for i := range d {
		d[i] = binary.BigEndian.Uint32(raw[4*i:])
	}
	return d
}
