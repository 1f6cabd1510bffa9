package idx

import (
	"bytes"
	"compress/gzip"
	"encoding/binary"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"testing"
)

// encode returns an IDX file of unsigned bytes with the given dimensions.
func encode(data []byte, dims ...int) []byte {
	b := []byte{0, 0, unsignedByte, byte(len(dims))}
	for _, d := range dims {
		b = binary.BigEndian.AppendUint32(b, uint32(d))
	}
	return append(b, data...)
}

// gz compresses b.
func gz(b []byte) []byte {
	var buf bytes.Buffer
	w := gzip.NewWriter(&buf)
	w.Write(b)
	w.Close()
	return buf.Bytes()
}

func seq(n int) []byte {
	b := make([]byte, n)
	for i := range b {
		b[i] = byte(i * 7)
	}
	return b
}

func TestDecode(t *testing.T) {
	for _, compress := range []bool{false, true} {
		file := encode(seq(2*3*5), 2, 3, 5)
		if compress {
			file = gz(file)
		}
		a, err := Decode("x", file)
		if err != nil {
			t.Fatalf("gzip %v: %v", compress, err)
		}
		if !slices.Equal(a.Dims, []int{2, 3, 5}) || !bytes.Equal(a.Data, seq(30)) {
			t.Errorf("gzip %v: dims %v data %v", compress, a.Dims, a.Data)
		}
	}
}

// TestBlackImagesAtBestCompression: an all-zero file compresses about
// 1026-fold, close to deflate's bound of 1032, and must still be accepted.
func TestBlackImagesAtBestCompression(t *testing.T) {
	var buf bytes.Buffer
	w, _ := gzip.NewWriterLevel(&buf, gzip.BestCompression)
	w.Write(encode(make([]byte, 5000*28*28), 5000, 28, 28))
	w.Close()
	a, err := Decode("black.gz", buf.Bytes())
	if err != nil {
		t.Fatal(err)
	}
	if ratio := float64(len(a.Data)) / float64(buf.Len()); ratio < 1000 {
		t.Errorf("compressed %.0f-fold only; the test needs a ratio near the bound", ratio)
	}
}

// TestBadFiles checks every refusal: the error is an *Error naming the
// file and the offset at fault, wrapping ErrTruncated for short files.
func TestBadFiles(t *testing.T) {
	good := encode(seq(12), 3, 4)
	badSum := gz(good)
	badSum[len(badSum)-8] ^= 1 // the CRC-32 of the gzip trailer
	tests := []struct {
		name      string
		data      []byte
		offset    int64 // -1: where the decompressor stops
		gzip      bool
		truncated bool
	}{
		{"empty", nil, 0, false, true},
		{"short magic", []byte{0, 0, 8}, 3, false, true},
		{"bad magic", append([]byte{1, 0}, good[2:]...), 0, false, false},
		{"float elements", append([]byte{0, 0, 0x0d}, good[3:]...), 2, false, false},
		{"no dimensions", []byte{0, 0, 8, 0}, 3, false, false},
		{"five dimensions", []byte{0, 0, 8, 5}, 3, false, false},
		{"short dimensions", good[:9], 9, false, true},
		{"zero dimension", encode(nil, 3, 0), 8, false, false},
		{"absurd claim", encode(nil, 1<<16, 1<<16), 8, false, false},
		{"truncated", good[:len(good)-1], int64(len(good) - 1), false, true},
		{"trailing bytes", append(slices.Clone(good), 0), int64(len(good)), false, false},
		{"gzip truncated", gz(good)[:20], -1, true, true},
		{"gzip without trailer", gz(good)[:len(gz(good))-8], int64(len(good)), true, true},
		{"gzip short of the claim", gz(encode(seq(11), 3, 4)), 23, true, true},
		{"gzip claim beyond deflate", gz(encode(nil, 1<<14, 1<<14)), 4, true, true},
		{"gzip trailing bytes", gz(append(slices.Clone(good), 1)), int64(len(good)), true, false},
		{"gzip checksum", badSum, int64(len(good)), true, false},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			_, err := Decode("f.idx", tt.data)
			var e *Error
			if !errors.As(err, &e) {
				t.Fatalf("error %v, want an *Error", err)
			}
			if e.File != "f.idx" || (tt.offset >= 0 && e.Offset != tt.offset) || e.Gzip != tt.gzip || errors.Is(err, ErrTruncated) != tt.truncated {
				t.Errorf("%v: file %q offset %d gzip %v truncated %v; want offset %d gzip %v truncated %v",
					err, e.File, e.Offset, e.Gzip, errors.Is(err, ErrTruncated), tt.offset, tt.gzip, tt.truncated)
			}
		})
	}
	if _, err := Decode("f.gz", []byte{0x1f, 0x8b, 0}); err == nil {
		t.Error("a broken gzip header: no error")
	}
}

// TestAbsurdClaimsRefusedBeforeAllocating gives ReadFile a raw file whose
// header claims more than MaxBytes and a small gzip file whose header
// claims more than it could decompress to: both must be refused having
// allocated almost nothing.
func TestAbsurdClaimsRefusedBeforeAllocating(t *testing.T) {
	dir := t.TempDir()
	files := map[string][]byte{
		"raw":    encode(nil, 1<<15, 1<<15, 2),
		"gzip":   gz(encode(seq(1000), 1<<15, 1<<14)),
		"sparse": nil, // a 512 MiB sparse raw file one byte short of its claim
	}
	for name, data := range files {
		path := filepath.Join(dir, name)
		if err := os.WriteFile(path, data, 0o644); err != nil {
			t.Fatal(err)
		}
		if name == "sparse" {
			f, _ := os.OpenFile(path, os.O_RDWR, 0)
			f.Write(encode(nil, 1<<14, 1<<15))
			err := f.Truncate(int64(len(encode(nil, 1<<14, 1<<15))) + 1<<29 - 1)
			f.Close()
			if err != nil {
				t.Skip("cannot make a sparse file:", err)
			}
		}
		var before, after runtime.MemStats
		runtime.ReadMemStats(&before)
		_, err := ReadFile(path)
		runtime.ReadMemStats(&after)
		var e *Error
		if !errors.As(err, &e) || e.File != path {
			t.Fatalf("%s: error %v, want one naming %s", name, err, path)
		}
		if got := after.TotalAlloc - before.TotalAlloc; got > 1<<20 {
			t.Errorf("%s: %d bytes allocated before refusing", name, got)
		}
	}
}
