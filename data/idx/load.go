package idx

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/data/cifar"
)

// The MNIST layout's file names, without the optional .gz suffix.
const (
	trainImages = "train-images-idx3-ubyte"
	trainLabels = "train-labels-idx1-ubyte"
	testImages  = "t10k-images-idx3-ubyte"
	testLabels  = "t10k-labels-idx1-ubyte"
)

// Files are the four files of a directory in the MNIST layout.
type Files struct {
	TrainImages, TrainLabels, TestImages, TestLabels string
}

// Paths lists the files in the order of the struct's fields.
func (f Files) Paths() []string {
	return []string{f.TrainImages, f.TrainLabels, f.TestImages, f.TestLabels}
}

// NotFoundError reports a directory holding none of the MNIST layout's
// files.
type NotFoundError struct{ Dir string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("idx: %s holds none of %s, %s, %s, %s (raw or .gz)", e.Dir, trainImages, trainLabels, testImages, testLabels)
}

// Detect finds the four files of the MNIST layout in dir, each raw or with
// a .gz suffix; when both are present the raw one is used. A directory
// holding none of them gives a *NotFoundError; one holding some but not all
// an error naming the first one missing.
func Detect(dir string) (Files, error) {
	fi, err := os.Stat(dir)
	if err != nil {
		return Files{}, fmt.Errorf("idx: %w", err)
	}
	if !fi.IsDir() {
		return Files{}, fmt.Errorf("idx: %s is not a directory", dir)
	}
	names := []string{trainImages, trainLabels, testImages, testLabels}
	paths := make([]string, len(names))
	var missing []string
	for i, n := range names {
		for _, p := range []string{n, n + ".gz"} {
			p = filepath.Join(dir, p)
			if _, err := os.Stat(p); !errors.Is(err, fs.ErrNotExist) {
				paths[i] = p
				break
			}
		}
		if paths[i] == "" {
			missing = append(missing, filepath.Join(dir, n))
		}
	}
	switch len(missing) {
	case 0:
		return Files{paths[0], paths[1], paths[2], paths[3]}, nil
	case len(names):
		return Files{}, &NotFoundError{dir}
	}
	return Files{}, fmt.Errorf("idx: %s (raw or .gz) is missing", missing[0])
}

// Load reads the training and test sets of dir, which holds the MNIST
// layout (Detect), as grey datasets of 32×32 images.
func Load(dir string) (train, test *cifar.Dataset, err error) {
	f, err := Detect(dir)
	if err != nil {
		return nil, nil, err
	}
	return f.Load()
}

// Load reads the four files as grey datasets of 32×32 images: each split's
// images and labels must agree in count, and every image must fit in
// 32×32 pixels. The splits must agree with each other: their images of
// one size (each is centred in 32×32 alike), and the labels a set of
// classes 0…C−1 that the training split covers, every test label one of
// them. The number of classes of both is C, one more than the largest
// training label. A disagreement is a *SplitError.
func (f Files) Load() (train, test *cifar.Dataset, err error) {
	train, trainSize, err := readSplit(f.TrainImages, f.TrainLabels)
	if err != nil {
		return nil, nil, err
	}
	test, testSize, err := readSplit(f.TestImages, f.TestLabels)
	if err != nil {
		return nil, nil, err
	}
	if trainSize != testSize {
		return nil, nil, &SplitError{f.TestImages, fmt.Sprintf("%d×%d images, but the training images (%s) are %d×%d", testSize[0], testSize[1], f.TrainImages, trainSize[0], trainSize[1])}
	}
	seen := make([]bool, train.Classes)
	for _, l := range train.Labels {
		seen[l] = true
	}
	if missing := countFalse(seen); missing > 0 {
		first := 0
		for seen[first] {
			first++
		}
		return nil, nil, &SplitError{f.TrainLabels, fmt.Sprintf("the labels run to %d, but %d of the classes 0…%d have no training image (the first: %d); want the classes 0…C−1", train.Classes-1, missing, train.Classes-1, first)}
	}
	for i, l := range test.Labels {
		if int(l) >= train.Classes {
			return nil, nil, &SplitError{f.TestLabels, fmt.Sprintf("test image %d has label %d, a class no training image has (0…%d)", i, l, train.Classes-1)}
		}
	}
	test.Classes = train.Classes
	return train, test, nil
}

// SplitError is a data set whose training and test splits disagree: in
// the size of their images, or in their labels.
type SplitError struct {
	Path   string // the file at fault
	Reason string
}

func (e *SplitError) Error() string { return fmt.Sprintf("idx: %s: %s", e.Path, e.Reason) }

// countFalse counts the false values of b.
func countFalse(b []bool) int {
	n := 0
	for _, v := range b {
		if !v {
			n++
		}
	}
	return n
}

// readSplit reads an image file and its label file into a grey dataset
// whose Classes is one more than its largest label, and returns the size
// of its images (rows, columns).
func readSplit(imagePath, labelPath string) (*cifar.Dataset, [2]int, error) {
	labels, err := ReadFile(labelPath)
	if err != nil {
		return nil, [2]int{}, err
	}
	if len(labels.Dims) != 1 {
		return nil, [2]int{}, fmt.Errorf("idx: %s: %d dimensions %v, want 1 for labels", labelPath, len(labels.Dims), labels.Dims)
	}
	images, err := ReadFile(imagePath)
	if err != nil {
		return nil, [2]int{}, err
	}
	if len(images.Dims) != 3 {
		return nil, [2]int{}, fmt.Errorf("idx: %s: %d dimensions %v, want 3 for images (count, rows, columns)", imagePath, len(images.Dims), images.Dims)
	}
	n, h, w := images.Dims[0], images.Dims[1], images.Dims[2]
	if h > cifar.Side || w > cifar.Side {
		return nil, [2]int{}, fmt.Errorf("idx: %s: %d×%d images, larger than %d×%d", imagePath, h, w, cifar.Side, cifar.Side)
	}
	if n != labels.Dims[0] {
		return nil, [2]int{}, fmt.Errorf("idx: %s holds %d images but %s holds %d labels", imagePath, n, labelPath, labels.Dims[0])
	}
	d := &cifar.Dataset{Images: make([]byte, n*cifar.Side*cifar.Side), Labels: labels.Data, Grey: true}
	top, left := (cifar.Side-h)/2, (cifar.Side-w)/2
	for i := range n {
		src, dst := images.Data[i*h*w:(i+1)*h*w], d.Image(i)
		for y := range h {
			copy(dst[(top+y)*cifar.Side+left:], src[y*w:(y+1)*w])
		}
	}
	for _, l := range d.Labels {
		d.Classes = max(d.Classes, int(l)+1)
	}
	return d, [2]int{h, w}, nil
}
