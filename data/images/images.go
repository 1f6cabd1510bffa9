// Package images loads any image data set the CNN trainer supports,
// detected from the files in a directory: CIFAR-10 or CIFAR-100 binaries
// (data/cifar), MNIST-style IDX files such as Fashion-MNIST's (data/idx),
// or one folder of PNG or JPEG files per class (data/folder). Either way the result is a pair of data/cifar Datasets of 32×32 images,
// RGB or grey, which data/cifar splits, normalises, augments and batches.
package images

import (
	"errors"
	"fmt"
	"slices"

	"github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/data/folder"
	"github.com/psclip/psclip/data/idx"
)

// Format is a supported layout of an image data set.
type Format string

// The supported formats.
const (
	CIFAR10  Format = "cifar-10"
	CIFAR100 Format = "cifar-100"
	IDX      Format = "idx"    // MNIST's layout: MNIST, Fashion-MNIST
	Folder   Format = "folder" // a folder of PNG or JPEG files per class
)

// Source is a directory holding an image data set in a known format.
type Source struct {
	// Dir is the directory holding the files: the directory given to
	// Detect, or the folder inside it that an official CIFAR archive
	// unpacks into.
	Dir    string
	Format Format
}

// NotFoundError reports a directory that holds no supported data set.
type NotFoundError struct{ Dir string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("images: %s holds no image data set: neither CIFAR-100 (train.bin, test.bin), CIFAR-10 (data_batch_1.bin … data_batch_5.bin, test_batch.bin) MNIST-style IDX files (train-images-idx3-ubyte, train-labels-idx1-ubyte, t10k-images-idx3-ubyte, t10k-labels-idx1-ubyte, raw or .gz) nor class folders of PNG or JPEG files (DIR/<class>/, or DIR/train/<class>/ and DIR/test/<class>/)", e.Dir)
}

// Detect finds which format dir holds. A directory with the files of more
// than one format is refused, as is a partial set of one format's files
// (the error names the missing file).
func Detect(dir string) (Source, error) {
	cdir, cformat, cerr := cifar.Detect(dir)
	_, ierr := idx.Detect(dir)
	var cnf *cifar.NotFoundError
	var inf *idx.NotFoundError
	cifarNone, idxNone := errors.As(cerr, &cnf), errors.As(ierr, &inf)
	switch {
	case cerr == nil && ierr == nil:
		return Source{}, fmt.Errorf("images: %s holds both CIFAR and IDX files; keep one data set per directory", dir)
	case cerr == nil:
		f := CIFAR100
		if cformat == cifar.CIFAR10 {
			f = CIFAR10
		}
		return Source{Dir: cdir, Format: f}, nil
	case ierr == nil:
		return Source{Dir: dir, Format: IDX}, nil
	case !cifarNone:
		return Source{}, cerr
	case !idxNone:
		return Source{}, ierr
	}
	var fnf *folder.NotFoundError
	switch err := folder.Detect(dir); {
	case err == nil:
		return Source{Dir: dir, Format: Folder}, nil
	case !errors.As(err, &fnf):
		return Source{}, err
	}
	return Source{}, &NotFoundError{dir}
}

// Load reads the training and test sets of s. A training set whose images
// all have one label is refused (*OneClassError): a classifier learns
// nothing from it.
func (s Source) Load() (train, test *cifar.Dataset, err error) {
	switch s.Format {
	case IDX:
		train, test, err = idx.Load(s.Dir)
	case Folder:
		train, test, err = folder.Load(s.Dir)
	default:
		train, test, err = cifar.Load(s.Dir)
	}
	if err != nil {
		return nil, nil, err
	}
	if len(train.Labels) > 0 && !slices.ContainsFunc(train.Labels, func(l uint8) bool { return l != train.Labels[0] }) {
		return nil, nil, &OneClassError{Dir: s.Dir, Label: int(train.Labels[0])}
	}
	return train, test, nil
}

// OneClassError is a data set whose training images all have one label.
type OneClassError struct {
	Dir   string
	Label int
}

func (e *OneClassError) Error() string {
	return fmt.Sprintf("images: %s: every training image has label %d; a classifier needs at least 2 classes", e.Dir, e.Label)
}

// Load detects the format of dir and reads its training and test sets.
func Load(dir string) (train, test *cifar.Dataset, src Source, err error) {
	if src, err = Detect(dir); err != nil {
		return nil, nil, Source{}, err
	}
	train, test, err = src.Load()
	return train, test, src, err
}
