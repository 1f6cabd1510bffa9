package cifar

import (
	"bufio"
	"bytes"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"path/filepath"
	"strings"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/regfile"
)

// Image geometry of every CIFAR record.
const (
	Side       = 32                     // images are Side×Side pixels
	Channels   = 3                      // R, G, B planes
	ImageBytes = Channels * Side * Side // 3072 pixel bytes per image
)

// MaxRecords caps the number of records accepted from one file (the real
// files hold at most 50,000). A file whose size claims more is rejected
// before anything is allocated for it.
const MaxRecords = 1_000_000

// Format is one of the two CIFAR binary layouts.
type Format int

const (
	// CIFAR10 records are 1 label byte + 3072 pixel bytes, in the files
	// data_batch_1.bin … data_batch_5.bin and test_batch.bin.
	CIFAR10 Format = 10
	// CIFAR100 records are 1 coarse-label byte, 1 fine-label byte and 3072
	// pixel bytes, in the files train.bin and test.bin.
	CIFAR100 Format = 100
)

func (f Format) String() string { return fmt.Sprintf("CIFAR-%d", int(f)) }

// recordSize is the length in bytes of one record.
func (f Format) recordSize() int {
	if f == CIFAR100 {
		return 2 + ImageBytes
	}
	return 1 + ImageBytes
}

// File names of the two layouts, as the official binary archives unpack them.
var (
	cifar10Train = []string{"data_batch_1.bin", "data_batch_2.bin", "data_batch_3.bin", "data_batch_4.bin", "data_batch_5.bin"}
	cifar10Test  = "test_batch.bin"
	archiveDirs  = []string{"cifar-100-binary", "cifar-10-batches-bin"} // what the official tarballs unpack into
)

const (
	cifar100Train  = "train.bin"
	cifar100Test   = "test.bin"
	fineNamesFile  = "fine_label_names.txt"
	coarseClasses  = 20 // CIFAR-100 superclasses
	maxNamesBytes  = 1 << 16
	cifar100Labels = 100
)

// Dataset is a set of Side×Side images held as bytes, exactly as stored on
// disk: CIFAR's RGB images, or grey ones (data/idx loads MNIST-style data
// as grey Datasets).
type Dataset struct {
	// Images holds Len() images of ImageSize() bytes each; every image is
	// channel-major: the R, G and B planes, or the one grey plane, each 32
	// rows of 32 pixels.
	Images []byte
	// Labels is the class of each image (the fine label for CIFAR-100).
	Labels []uint8
	// Coarse is the CIFAR-100 superclass of each image; nil for CIFAR-10.
	Coarse []uint8
	// Classes is the number of classes; every label is below it.
	Classes int
	// Grey marks images of one grey plane (Side×Side bytes); the zero
	// value is CIFAR's RGB (ImageBytes).
	Grey bool
}

// Len is the number of images.
func (d *Dataset) Len() int { return len(d.Labels) }

// Channels is the number of planes of every image: 1 if Grey, else 3.
func (d *Dataset) Channels() int {
	if d.Grey {
		return 1
	}
	return Channels
}

// ImageSize is the number of bytes of every image: Channels()·Side·Side.
func (d *Dataset) ImageSize() int { return d.Channels() * Side * Side }

// Image returns image i, sharing d's memory.
func (d *Dataset) Image(i int) []byte {
	n := d.ImageSize()
	return d.Images[i*n : (i+1)*n : (i+1)*n]
}

// Subset returns a copy of the images at the given indices, in that order.
func (d *Dataset) Subset(idx []int) *Dataset {
	s := &Dataset{Images: make([]byte, len(idx)*d.ImageSize()), Labels: make([]uint8, len(idx)), Classes: d.Classes, Grey: d.Grey}
	if d.Coarse != nil {
		s.Coarse = make([]uint8, len(idx))
	}
	for j, i := range idx {
		copy(s.Image(j), d.Image(i))
		s.Labels[j] = d.Labels[i]
		if d.Coarse != nil {
			s.Coarse[j] = d.Coarse[i]
		}
	}
	return s
}

// Load reads the training and test sets from dir, which holds either the
// CIFAR-100 files (train.bin, test.bin) or the CIFAR-10 batches
// (data_batch_1.bin … data_batch_5.bin, test_batch.bin); dir may also be
// the folder an official archive unpacks into. For CIFAR-100 the number of
// classes is the number of names in fine_label_names.txt when that file is
// present (synthetic sets have fewer than 100), and 100 otherwise.
func Load(dir string) (train, test *Dataset, err error) {
	dir, format, err := Detect(dir)
	if err != nil {
		return nil, nil, err
	}
	classes := 10
	trainFiles, testFile := cifar10Train, cifar10Test
	if format == CIFAR100 {
		if classes, err = readClassCount(filepath.Join(dir, fineNamesFile)); err != nil {
			return nil, nil, err
		}
		trainFiles, testFile = []string{cifar100Train}, cifar100Test
	}
	parts := make([]*Dataset, len(trainFiles))
	for i, name := range trainFiles {
		if parts[i], err = ReadFile(filepath.Join(dir, name), format, classes); err != nil {
			return nil, nil, err
		}
	}
	if test, err = ReadFile(filepath.Join(dir, testFile), format, classes); err != nil {
		return nil, nil, err
	}
	return concat(parts), test, nil
}

// Detect finds which CIFAR layout dir holds, looking also inside the folder
// name an official archive unpacks into, and returns the folder holding the
// files. A directory without any of the files gives a *NotFoundError; a
// partial set of files is an error naming the missing one.
func Detect(dir string) (string, Format, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return "", 0, fmt.Errorf("cifar: %w", err)
	}
	if !fi.IsDir() {
		return "", 0, fmt.Errorf("cifar: %s is not a directory", dir)
	}
	for _, d := range append([]string{dir}, joinAll(dir, archiveDirs)...) {
		switch {
		case exists(filepath.Join(d, cifar100Train)) || exists(filepath.Join(d, cifar100Test)):
			return d, CIFAR100, requireAll(d, cifar100Train, cifar100Test)
		case exists(filepath.Join(d, cifar10Train[0])) || exists(filepath.Join(d, cifar10Test)):
			return d, CIFAR10, requireAll(d, append(cifar10Train, cifar10Test)...)
		}
	}
	return "", 0, &NotFoundError{dir}
}

// NotFoundError reports a directory that holds no CIFAR files at all.
type NotFoundError struct{ Dir string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("cifar: %s holds neither CIFAR-100 (train.bin, test.bin) nor CIFAR-10 (data_batch_1.bin … data_batch_5.bin, test_batch.bin) binary files", e.Dir)
}

func joinAll(dir string, names []string) []string {
	out := make([]string, len(names))
	for i, n := range names {
		out[i] = filepath.Join(dir, n)
	}
	return out
}

func exists(path string) bool {
	_, err := os.Stat(path)
	return !errors.Is(err, fs.ErrNotExist)
}

func requireAll(dir string, names ...string) error {
	for _, n := range names {
		if !exists(filepath.Join(dir, n)) {
			return fmt.Errorf("cifar: %s is missing", filepath.Join(dir, n))
		}
	}
	return nil
}

// readClassCount counts the non-empty lines of a CIFAR-100 label-names file;
// a missing file means the full 100 classes.
func readClassCount(path string) (int, error) {
	f, _, err := regfile.Open(path)
	if errors.Is(err, fs.ErrNotExist) {
		return cifar100Labels, nil
	}
	if err != nil {
		return 0, fmt.Errorf("cifar: %w", err)
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxNamesBytes+1))
	if err != nil {
		return 0, fmt.Errorf("cifar: %w", err)
	}
	if len(b) > maxNamesBytes {
		return 0, fmt.Errorf("cifar: %s: longer than %d bytes; not a label-names file", path, maxNamesBytes)
	}
	n := 0
	for _, line := range strings.Split(string(b), "\n") {
		if strings.TrimSpace(line) != "" {
			n++
		}
	}
	if n < 1 || n > cifar100Labels {
		return 0, fmt.Errorf("cifar: %s: %d class names, want 1 to %d", path, n, cifar100Labels)
	}
	return n, nil
}

// ReadFile reads one CIFAR binary file of the given format whose labels must
// be below classes (1 ≤ classes ≤ 10 or 100, by format). The file's size is checked before anything is allocated:
// it must be a positive multiple of the record size and hold at most
// MaxRecords records. Errors name the file, and the record and byte offset
// at fault.
func ReadFile(path string, format Format, classes int) (*Dataset, error) {
	f, size, err := regfile.Open(path) // a FIFO is refused, never waited on
	if err != nil {
		return nil, fmt.Errorf("cifar: %w", err)
	}
	defer f.Close()
	n, err := countRecords(path, size, format)
	if err != nil {
		return nil, err
	}
	return decode(path, bufio.NewReaderSize(f, 1<<16), n, format, classes)
}

// countRecords checks that a file of size bytes holds a whole, sane number
// of records.
func countRecords(name string, size int64, format Format) (int, error) {
	rs := int64(format.recordSize())
	switch {
	case size == 0:
		return 0, fmt.Errorf("cifar: %s is empty", name)
	case size%rs != 0:
		n := size / rs
		return 0, fmt.Errorf("cifar: %s: %d bytes is not a whole number of %d-byte %v records: record %d at offset %d is truncated (%d of %d bytes)",
			name, size, rs, format, n, n*rs, size-n*rs, rs)
	case size/rs > MaxRecords:
		return 0, fmt.Errorf("cifar: %s: %d bytes claims %d records, more than the limit of %d", name, size, size/rs, MaxRecords)
	}
	return int(size / rs), nil
}

// Decode parses a whole CIFAR binary file held in memory; name is used in
// errors. It applies the same checks as ReadFile.
func Decode(name string, data []byte, format Format, classes int) (*Dataset, error) {
	n, err := countRecords(name, int64(len(data)), format)
	if err != nil {
		return nil, err
	}
	return decode(name, bytes.NewReader(data), n, format, classes)
}

// decode reads n records of format from r straight into the dataset's
// buffers and validates every label.
func decode(name string, r io.Reader, n int, format Format, classes int) (*Dataset, error) {
	if classes < 1 || classes > int(format) {
		panic(fmt.Sprintf("cifar: %d classes for %v", classes, format))
	}
	d := &Dataset{Images: make([]byte, n*ImageBytes), Labels: make([]uint8, n), Classes: classes}
	head := 1
	if format == CIFAR100 {
		d.Coarse = make([]uint8, n)
		head = 2
	}
	rs := int64(format.recordSize())
	var hdr [2]byte
	for i := range n {
		off := int64(i) * rs
		if _, err := io.ReadFull(r, hdr[:head]); err != nil {
			return nil, readError(name, i, off, err)
		}
		if _, err := io.ReadFull(r, d.Image(i)); err != nil {
			return nil, readError(name, i, off, err)
		}
		label := hdr[head-1]
		if int(label) >= classes {
			kind := "label"
			if format == CIFAR100 {
				kind = "fine label"
			}
			return nil, fmt.Errorf("cifar: %s: record %d at offset %d: %s %d out of range [0, %d)", name, i, off+int64(head-1), kind, label, classes)
		}
		d.Labels[i] = label
		if format == CIFAR100 {
			if hdr[0] >= coarseClasses {
				return nil, fmt.Errorf("cifar: %s: record %d at offset %d: coarse label %d out of range [0, %d)", name, i, off, hdr[0], coarseClasses)
			}
			d.Coarse[i] = hdr[0]
		}
	}
	return d, nil
}

func readError(name string, i int, off int64, err error) error {
	if errors.Is(err, io.ErrUnexpectedEOF) || errors.Is(err, io.EOF) {
		return fmt.Errorf("cifar: %s: record %d at offset %d is truncated (the file shrank while being read)", name, i, off)
	}
	return fmt.Errorf("cifar: %s: record %d at offset %d: %w", name, i, off, err)
}

// concat joins datasets of the same format into one.
func concat(parts []*Dataset) *Dataset {
	if len(parts) == 1 {
		return parts[0]
	}
	d := &Dataset{Classes: parts[0].Classes, Grey: parts[0].Grey}
	for _, p := range parts {
		d.Images = append(d.Images, p.Images...)
		d.Labels = append(d.Labels, p.Labels...)
		if p.Coarse != nil {
			d.Coarse = append(d.Coarse, p.Coarse...)
		}
	}
	return d
}

// Encode returns d in the CIFAR-100 binary format. d must be RGB and have
// coarse labels.
func (d *Dataset) Encode() []byte {
	if d.Grey || len(d.Coarse) != d.Len() || len(d.Images) != d.Len()*ImageBytes {
		panic("cifar: Encode of a grey dataset, one without coarse labels or one with a ragged image buffer")
	}
	rs := CIFAR100.recordSize()
	out := make([]byte, d.Len()*rs)
	for i := range d.Len() {
		rec := out[i*rs : (i+1)*rs]
		rec[0], rec[1] = d.Coarse[i], d.Labels[i]
		copy(rec[2:], d.Image(i))
	}
	return out
}

// WriteDir writes train and test to dir in the CIFAR-100 binary layout
// (train.bin, test.bin) with generic label-names files
// (fine_label_names.txt: class_00, class_01, …; coarse_label_names.txt:
// superclass_00, …), so that Load reads back the same number of classes.
// dir is created if needed. Every file is written atomically; if one fails,
// those already written by this call are removed, so dir never holds a
// mixture of old and new files.
func WriteDir(dir string, train, test *Dataset) error {
	if train.Classes != test.Classes || train.Classes < 1 || train.Classes > cifar100Labels {
		return fmt.Errorf("cifar: cannot write %d training and %d test classes as CIFAR-100", train.Classes, test.Classes)
	}
	if len(train.Coarse) != train.Len() || len(test.Coarse) != test.Len() {
		return fmt.Errorf("cifar: cannot write a data set without coarse labels as CIFAR-100")
	}
	if train.Grey || test.Grey {
		return fmt.Errorf("cifar: cannot write grey images as CIFAR-100")
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("cifar: %w", err)
	}
	var fine, coarse strings.Builder
	for c := range train.Classes {
		fmt.Fprintf(&fine, "class_%02d\n", c)
	}
	for c := range coarseClasses {
		fmt.Fprintf(&coarse, "superclass_%02d\n", c)
	}
	files := []struct {
		name string
		data []byte
	}{
		{cifar100Train, train.Encode()},
		{cifar100Test, test.Encode()},
		{fineNamesFile, []byte(fine.String())},
		{"coarse_label_names.txt", []byte(coarse.String())},
	}
	for i, f := range files {
		err := atomicfile.WriteFile(filepath.Join(dir, f.name), f.data)
		if err != nil {
			for _, done := range files[:i] {
				os.Remove(filepath.Join(dir, done.name))
			}
			return fmt.Errorf("cifar: %w", err)
		}
	}
	return nil
}
