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
// 32×32 pixels. The number of classes of both is one more than the
// largest label of either.
func (f Files) Load() (train, test *cifar.Dataset, err error) {
	if train, err = readSplit(f.TrainImages, f.TrainLabels); err != nil {
		return nil, nil, err
	}
	if test, err = readSplit(f.TestImages, f.TestLabels); err != nil {
		return nil, nil, err
	}
	classes := max(train.Classes, test.Classes)
	train.Classes, test.Classes = classes, classes
	return train, test, nil
}

// readSplit reads an image file and its label file into a grey dataset
// whose Classes is one more than its largest label.
func readSplit(imagePath, labelPath string) (*cifar.Dataset, error) {
	labels, err := ReadFile(labelPath)
	if err != nil {
		return nil, err
	}
	if len(labels.Dims) != 1 {
		return nil, fmt.Errorf("idx: %s: %d dimensions %v, want 1 for labels", labelPath, len(labels.Dims), labels.Dims)
	}
	images, err := ReadFile(imagePath)
	if err != nil {
		return nil, err
	}
	if len(images.Dims) != 3 {
		return nil, fmt.Errorf("idx: %s: %d dimensions %v, want 3 for images (count, rows, columns)", imagePath, len(images.Dims), images.Dims)
	}
	n, h, w := images.Dims[0], images.Dims[1], images.Dims[2]
	if h > cifar.Side || w > cifar.Side {
		return nil, fmt.Errorf("idx: %s: %d×%d images, larger than %d×%d", imagePath, h, w, cifar.Side, cifar.Side)
	}
	if n != labels.Dims[0] {
		return nil, fmt.Errorf("idx: %s holds %d images but %s holds %d labels", imagePath, n, labelPath, labels.Dims[0])
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
	return d, nil
}
