// Package folder loads an image data set stored as one sub-folder of PNG
// or JPEG files per class (the layout of torchvision's ImageFolder) into
// data/cifar Datasets of 32×32 images, which data/cifar splits, normalises,
// augments and batches like any other image set.
//
// Two layouts are read:
//
//	DIR/train/<class>/*.png|*.jpg|*.jpeg and DIR/test/<class>/…
//	DIR/<class>/…   (the test set is then every tenth file of each class)
//
// Classes are the training folder's sub-folders in byte order of their
// names; label i is the i-th. In the second layout the files of each class,
// in byte order of their names, go to the test set at positions 9, 19, 29,
// …, so the split is fixed by the names alone. Files of other extensions
// and names starting with "." are ignored.
//
// Every image is resized so that its shorter side is 32 pixels, by area
// averaging (each output pixel the mean of the input area it covers, in
// float64, rounded to nearest), then cropped to its central 32×32. The set
// is grey when every image is grey (a Gray or Gray16 PNG, a grey JPEG), and
// RGB otherwise, grey images then repeated in the three planes; an alpha
// channel is dropped (colours as stored, not composited).
package folder

import (
	"fmt"
	"image"
	"image/color"
	_ "image/jpeg" // registers the JPEG decoder
	_ "image/png"  // registers the PNG decoder
	"io/fs"
	"math"
	"os"
	"path/filepath"
	"slices"
	"strings"

	"github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/internal/regfile"
)

// MaxPixels is the largest image, in pixels, that is decoded: a larger one
// is refused from its header, before its pixels are allocated.
const MaxPixels = 1 << 26

// TestEvery is, in the layout without train/ and test/, the spacing of the
// test images within each class: the files at positions TestEvery−1,
// 2·TestEvery−1, … of the class, in name order.
const TestEvery = 10

// NotFoundError reports a directory in neither layout.
type NotFoundError struct{ Dir string }

func (e *NotFoundError) Error() string {
	return fmt.Sprintf("folder: %s holds no class folders of PNG or JPEG images (DIR/<class>/*.png, or DIR/train/<class>/ and DIR/test/<class>/)", e.Dir)
}

// Error is a data set that cannot be trained on: too few classes, an empty
// class, a test class the training set lacks, a file that does not decode.
type Error struct {
	Path   string // the directory or file at fault
	Reason string
}

func (e *Error) Error() string { return fmt.Sprintf("folder: %s: %s", e.Path, e.Reason) }

// Detect reports whether dir holds a data set in one of the two layouts,
// looking only at names (*NotFoundError if not).
func Detect(dir string) error {
	if isDir(filepath.Join(dir, "train")) && isDir(filepath.Join(dir, "test")) {
		return nil
	}
	classes, err := subdirs(dir)
	if err != nil {
		return err
	}
	for _, c := range classes {
		if files, err := imageFiles(filepath.Join(dir, c)); err == nil && len(files) > 0 {
			return nil
		}
	}
	return &NotFoundError{dir}
}

// Load reads the training and test sets of dir.
func Load(dir string) (train, test *cifar.Dataset, err error) {
	if err := Detect(dir); err != nil {
		return nil, nil, err
	}
	var trainFiles, testFiles [][]string // per class
	var classes []string
	if isDir(filepath.Join(dir, "train")) && isDir(filepath.Join(dir, "test")) {
		if classes, trainFiles, err = classFiles(filepath.Join(dir, "train"), nil); err != nil {
			return nil, nil, err
		}
		if _, testFiles, err = classFiles(filepath.Join(dir, "test"), classes); err != nil {
			return nil, nil, err
		}
	} else {
		var all [][]string
		if classes, all, err = classFiles(dir, nil); err != nil {
			return nil, nil, err
		}
		trainFiles, testFiles = make([][]string, len(all)), make([][]string, len(all))
		for c, files := range all {
			for i, f := range files {
				if i%TestEvery == TestEvery-1 {
					testFiles[c] = append(testFiles[c], f)
				} else {
					trainFiles[c] = append(trainFiles[c], f)
				}
			}
		}
	}
	if !slices.ContainsFunc(testFiles, func(f []string) bool { return len(f) > 0 }) {
		return nil, nil, &Error{dir, fmt.Sprintf("no test images: the test set takes every %dth file of a class (give a class at least %d, or use DIR/train and DIR/test)", TestEvery, TestEvery)}
	}
	if train, err = read(trainFiles); err != nil {
		return nil, nil, err
	}
	if test, err = read(testFiles); err != nil {
		return nil, nil, err
	}
	train.Classes, test.Classes = len(classes), len(classes)
	if train.Grey != test.Grey { // one colour model for both splits
		train, test = rgb(train), rgb(test)
	}
	return train, test, nil
}

// classFiles lists the class folders of dir and the image files of each.
// With want, the classes must be among want's and keep their labels.
func classFiles(dir string, want []string) ([]string, [][]string, error) {
	classes, err := subdirs(dir)
	if err != nil {
		return nil, nil, err
	}
	if want == nil {
		switch {
		case len(classes) < 2:
			return nil, nil, &Error{dir, fmt.Sprintf("%d class folder(s); a classifier needs at least 2", len(classes))}
		case len(classes) > 256:
			return nil, nil, &Error{dir, fmt.Sprintf("%d class folders; at most 256 are supported", len(classes))}
		}
		want = classes
	}
	files := make([][]string, len(want))
	for _, c := range classes {
		label := slices.Index(want, c)
		if label < 0 {
			return nil, nil, &Error{filepath.Join(dir, c), "a class the training set does not have"}
		}
		if files[label], err = imageFiles(filepath.Join(dir, c)); err != nil {
			return nil, nil, err
		}
		if len(files[label]) == 0 {
			return nil, nil, &Error{filepath.Join(dir, c), "no PNG or JPEG files"}
		}
	}
	return want, files, nil
}

// read decodes files (per class) into a Dataset, grey if every image is.
func read(files [][]string) (*cifar.Dataset, error) {
	var imgs []image.Image
	var labels []uint8
	grey := true
	for c, fs := range files {
		for _, f := range fs {
			img, err := decode(f)
			if err != nil {
				return nil, err
			}
			grey = grey && isGrey(img)
			imgs = append(imgs, img)
			labels = append(labels, uint8(c))
		}
	}
	if len(imgs) > cifar.MaxRecords {
		return nil, &Error{filepath.Dir(filepath.Dir(files[0][0])), fmt.Sprintf("%d images, more than %d", len(imgs), cifar.MaxRecords)}
	}
	d := &cifar.Dataset{Labels: labels, Grey: grey}
	d.Images = make([]byte, len(imgs)*d.ImageSize())
	for i, img := range imgs {
		fit(d.Image(i), img, d.Channels())
	}
	return d, nil
}

// decode reads one image, refusing one larger than MaxPixels from its
// header.
func decode(path string) (image.Image, error) {
	f, _, err := regfile.Open(path)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	cfg, _, err := image.DecodeConfig(f)
	if err != nil {
		return nil, &Error{path, "not a PNG or JPEG image: " + err.Error()}
	}
	if cfg.Width <= 0 || cfg.Height <= 0 || int64(cfg.Width)*int64(cfg.Height) > MaxPixels {
		return nil, &Error{path, fmt.Sprintf("%d×%d pixels; at most %d are read", cfg.Width, cfg.Height, MaxPixels)}
	}
	if _, err := f.Seek(0, 0); err != nil {
		return nil, err
	}
	img, _, err := image.Decode(f)
	if err != nil {
		return nil, &Error{path, "not a PNG or JPEG image: " + err.Error()}
	}
	return img, nil
}

// isGrey reports whether img's colour model holds grey levels only.
func isGrey(img image.Image) bool {
	switch img.ColorModel() {
	case color.GrayModel, color.Gray16Model:
		return true
	}
	return false
}

// fit resizes img so that its shorter side is cifar.Side by area
// averaging and writes its central Side×Side pixels into dst, channel
// major: the grey plane (channels 1) or the R, G and B planes.
func fit(dst []byte, img image.Image, channels int) {
	b := img.Bounds()
	w, h := b.Dx(), b.Dy()
	// Scale: the shorter side becomes Side; the crop takes the middle.
	scale := float64(cifar.Side) / float64(min(w, h))
	ow, oh := max(cifar.Side, int(math.Round(float64(w)*scale))), max(cifar.Side, int(math.Round(float64(h)*scale)))
	left, top := (ow-cifar.Side)/2, (oh-cifar.Side)/2
	xs, ys := areaWeights(w, ow, left), areaWeights(h, oh, top)
	planes := make([][]float64, channels) // the input, per channel
	for c := range planes {
		planes[c] = make([]float64, w*h)
	}
	for y := range h {
		for x := range w {
			r, g, bl, _ := img.At(b.Min.X+x, b.Min.Y+y).RGBA()
			if channels == 1 {
				planes[0][y*w+x] = float64(r) / 257
				continue
			}
			planes[0][y*w+x], planes[1][y*w+x], planes[2][y*w+x] = float64(r)/257, float64(g)/257, float64(bl)/257
		}
	}
	for c, p := range planes {
		out := dst[c*cifar.Side*cifar.Side : (c+1)*cifar.Side*cifar.Side]
		for oy, wy := range ys {
			for ox, wx := range xs {
				var s float64
				for _, a := range wy {
					row := p[a.i*w:]
					for _, e := range wx {
						s += a.w * e.w * row[e.i]
					}
				}
				out[oy*cifar.Side+ox] = byte(math.Round(min(255, max(0, s))))
			}
		}
	}
}

// weight is an input pixel's share of an output pixel.
type weight struct {
	i int
	w float64
}

// areaWeights returns, for the cifar.Side output pixels from first on of
// an axis of n input pixels resized to m, the input pixels each covers and
// the share of each: output pixel o covers [o·n/m, (o+1)·n/m) of the input,
// and its weights, the overlaps divided by the width n/m, sum to 1.
func areaWeights(n, m, first int) [][]weight {
	ws := make([][]weight, cifar.Side)
	step := float64(n) / float64(m)
	for o := range ws {
		lo, hi := float64(first+o)*step, float64(first+o+1)*step
		for i := int(math.Floor(lo)); i < n && float64(i) < hi; i++ {
			if w := (math.Min(hi, float64(i+1)) - math.Max(lo, float64(i))) / step; w > 0 {
				ws[o] = append(ws[o], weight{i, w})
			}
		}
	}
	return ws
}

// rgb returns d with three planes, a grey set's plane repeated.
func rgb(d *cifar.Dataset) *cifar.Dataset {
	if !d.Grey {
		return d
	}
	out := &cifar.Dataset{Labels: d.Labels, Classes: d.Classes, Images: make([]byte, d.Len()*cifar.ImageBytes)}
	for i := range d.Len() {
		src, dst := d.Image(i), out.Image(i)
		for c := range cifar.Channels {
			copy(dst[c*len(src):], src)
		}
	}
	return out
}

// subdirs lists the sub-folders of dir not starting with ".", sorted.
func subdirs(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var names []string
	for _, e := range es {
		if !strings.HasPrefix(e.Name(), ".") && isDir(filepath.Join(dir, e.Name())) {
			names = append(names, e.Name())
		}
	}
	slices.Sort(names)
	return names, nil
}

// imageFiles lists the PNG and JPEG files of dir by extension, sorted.
func imageFiles(dir string) ([]string, error) {
	es, err := os.ReadDir(dir)
	if err != nil {
		return nil, err
	}
	var files []string
	for _, e := range es {
		name := e.Name()
		switch strings.ToLower(filepath.Ext(name)) {
		case ".png", ".jpg", ".jpeg":
		default:
			continue
		}
		if strings.HasPrefix(name, ".") || e.Type()&fs.ModeType&^fs.ModeSymlink != 0 {
			continue
		}
		files = append(files, filepath.Join(dir, name))
	}
	slices.Sort(files)
	return files, nil
}

func isDir(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.IsDir()
}
