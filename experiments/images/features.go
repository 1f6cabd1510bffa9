package images

import (
	"cmp"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"slices"
	"strconv"

	cifardata "github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/models"
	"github.com/psclip/psclip/safetensors"
	"github.com/psclip/psclip/scatter"
	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
)

// FeaturesScatter is Config.Features for the fixed scattering features of
// Tramèr & Boneh's ScatterNet models (package scatter, J = 2, L = 8), on
// which ModelScatterLinear and ModelScatterCNN train.
const FeaturesScatter = "scatter"

// ScatterTransform is the transform of FeaturesScatter: 28×28 grey images
// (MNIST, Fashion-MNIST), J = 2 and L = 8, which gives 1 + 16 + 64 = 81
// channels of 28/2² = 7×7, as Tramèr & Boneh's models take them.
// data/idx centres 28×28 images on a 32×32 canvas with a 2-pixel black
// border; the transform takes the central 28×28 back (kymatio's padding
// then reflects the image itself, not the canvas's border), on pixels
// scaled to [0, 1] (v/255), as their code's ToTensor gives them.
var ScatterTransform = scatter.Config{Height: 28, Width: 28, J: 2, L: 8}

// scatterVersion is part of the features cache's key: it changes when the
// transform's output would (package scatter's numerics), so that a cache
// of an earlier version is computed again, never used.
const scatterVersion = 1

// canvasBorder is the black border data/idx adds to 28×28 images.
const canvasBorder = (cifardata.Side - 28) / 2

// Features are the fixed features of a data set's images, one after
// another in the order of Data.Train and Data.Test.
type Features struct {
	Channels, Height, Width int // of one image's features
	Train, Test             []float32
}

// size is the number of values of one image's features.
func (f *Features) size() int { return f.Channels * f.Height * f.Width }

// ScatterFeatures computes the scattering features (ScatterTransform) of
// d's training and test images into d.Features, over up to GOMAXPROCS
// goroutines (the values do not depend on their number). With a
// cacheDir, it first looks there for a cache file of these images and
// this transform (named by a hash of both): a valid one is used; a
// damaged one, or one of other images or another transform under that
// name, is reported on progress and computed again. A computed cache is
// written atomically. Progress (nil: none) gets a line every few thousand
// images. The images must be grey and at most 28×28 (nothing but black
// outside the canvas's central 28×28): an error says which is not.
func (d *Data) ScatterFeatures(cacheDir string, progress io.Writer) error {
	if progress == nil {
		progress = io.Discard
	}
	for _, s := range []struct {
		name string
		d    *cifardata.Dataset
	}{{"training", d.Train}, {"test", d.Test}} {
		if err := checkScatterImages(s.name, s.d); err != nil {
			return err
		}
	}
	t, err := scatter.New(ScatterTransform)
	if err != nil {
		return err
	}
	ch, h, w := t.Shape()
	key := scatterKey(d)
	path := ""
	if cacheDir != "" {
		path = filepath.Join(cacheDir, "scatter-"+key.Images[:16]+".safetensors")
		f, err := readFeatures(path, key, ch, h, w, d)
		if err == nil {
			d.Features = f
			return nil
		}
		if !errors.Is(err, os.ErrNotExist) {
			fmt.Fprintf(progress, "scatter features: %v; computing them again\n", err)
		}
	}
	f := &Features{Channels: ch, Height: h, Width: w}
	fmt.Fprintf(progress, "scatter features: %d training and %d test images (J = %d, L = %d: %d×%d×%d each)\n",
		d.Train.Len(), d.Test.Len(), ScatterTransform.J, ScatterTransform.L, ch, h, w)
	if f.Train, err = applyScatter(t, d.Train, progress); err != nil {
		return err
	}
	if f.Test, err = applyScatter(t, d.Test, progress); err != nil {
		return err
	}
	if path != "" {
		if err := writeFeatures(path, key, f); err != nil {
			return fmt.Errorf("scatter features cache: %w", err)
		}
		fmt.Fprintf(progress, "scatter features: cached in %s\n", path)
	}
	d.Features = f
	return nil
}

// checkScatterImages refuses images the transform cannot take: RGB ones,
// and grey ones with ink outside the canvas's central 28×28.
func checkScatterImages(name string, d *cifardata.Dataset) error {
	if !d.Grey {
		return fmt.Errorf("the %s images are RGB; the scattering transform takes grey 28×28 images (MNIST, Fashion-MNIST)", name)
	}
	for i := range d.Len() {
		img := d.Image(i)
		for a := range cifardata.Side {
			for b := range cifardata.Side {
				inner := a >= canvasBorder && a < cifardata.Side-canvasBorder && b >= canvasBorder && b < cifardata.Side-canvasBorder
				if !inner && img[a*cifardata.Side+b] != 0 {
					return fmt.Errorf("%s image %d is larger than 28×28 (pixel %d,%d of the 32×32 canvas is not black); the scattering transform takes grey images of at most 28×28 (MNIST, Fashion-MNIST)", name, i, a, b)
				}
			}
		}
	}
	return nil
}

// scatterChunk is the number of images transformed between progress
// lines.
const scatterChunk = 2000

// applyScatter transforms every image of d: the canvas's central 28×28
// pixels, v/255.
func applyScatter(t *scatter.Transform, d *cifardata.Dataset, progress io.Writer) ([]float32, error) {
	const side = 28
	out := make([]float32, d.Len()*t.Size())
	src := make([]float32, min(d.Len(), scatterChunk)*side*side)
	for lo := 0; lo < d.Len(); lo += scatterChunk {
		hi := min(lo+scatterChunk, d.Len())
		for i := lo; i < hi; i++ {
			img, px := d.Image(i), src[(i-lo)*side*side:]
			for a := range side {
				for b := range side {
					px[a*side+b] = float32(img[(a+canvasBorder)*cifardata.Side+b+canvasBorder]) / 255
				}
			}
		}
		if err := t.Apply(out[lo*t.Size():hi*t.Size()], src[:(hi-lo)*side*side]); err != nil {
			return nil, err
		}
		fmt.Fprintf(progress, "scatter features: %d/%d images\n", hi, d.Len())
	}
	return out, nil
}

// featuresKey identifies a features cache: the images (SHA-256 of the
// training and the test images and labels) and the transform.
type featuresKey struct {
	Images    string         `json:"images_sha256"`
	Transform scatter.Config `json:"transform"`
	Version   int            `json:"version"`
}

func scatterKey(d *Data) featuresKey {
	h := sha256.New()
	for _, s := range []*cifardata.Dataset{d.Train, d.Test} {
		fmt.Fprintf(h, "%d %d\n", s.Len(), len(s.Images))
		h.Write(s.Images)
	}
	return featuresKey{Images: hex.EncodeToString(h.Sum(nil)), Transform: ScatterTransform, Version: scatterVersion}
}

// The metadata keys of a features cache file.
const (
	metaKey      = "psclip_features_key"
	metaChecksum = "psclip_features_sha256" // of the training then the test tensor's bytes
)

// writeFeatures writes the cache file of f atomically: the tensors
// "train" and "test", the key and a checksum of the values.
func writeFeatures(path string, key featuresKey, f *Features) error {
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	k, err := json.Marshal(key)
	if err != nil {
		return err
	}
	ts := []safetensors.Tensor{
		safetensors.New("test", []int{len(f.Test) / f.size(), f.Channels, f.Height, f.Width}, f.Test),
		safetensors.New("train", []int{len(f.Train) / f.size(), f.Channels, f.Height, f.Width}, f.Train),
	}
	return safetensors.WriteFile(path, ts, map[string]string{metaKey: string(k), metaChecksum: featuresChecksum(ts[1].Data, ts[0].Data)})
}

func featuresChecksum(train, test []byte) string {
	h := sha256.New()
	h.Write(train)
	h.Write(test)
	return hex.EncodeToString(h.Sum(nil))
}

// readFeatures reads the cache file at path and checks it: its key must
// be key, its tensors of d's image counts and the features' shape, its
// values those it was written with. A missing file is an error wrapping
// os.ErrNotExist.
func readFeatures(path string, key featuresKey, ch, h, w int, d *Data) (*Features, error) {
	file, err := safetensors.ReadFile(path)
	if err != nil {
		return nil, err
	}
	want, err := json.Marshal(key)
	if err != nil {
		return nil, err
	}
	if got := file.Metadata[metaKey]; got != string(want) {
		return nil, fmt.Errorf("%s: the cache of other images or another transform (key %s, want %s)", path, got, want)
	}
	if len(file.Tensors) != 2 || file.Tensors[0].Name != "test" || file.Tensors[1].Name != "train" {
		return nil, fmt.Errorf("%s: want the tensors test and train", path)
	}
	test, train := file.Tensors[0], file.Tensors[1]
	for _, c := range []struct {
		t safetensors.Tensor
		n int
	}{{train, d.Train.Len()}, {test, d.Test.Len()}} {
		if want := []int{c.n, ch, h, w}; !slices.Equal(c.t.Shape, want) {
			return nil, fmt.Errorf("%s: tensor %s of shape %v, want %v", path, c.t.Name, c.t.Shape, want)
		}
	}
	if got, want := file.Metadata[metaChecksum], featuresChecksum(train.Data, test.Data); got != want {
		return nil, fmt.Errorf("%s: damaged: its values' SHA-256 is %s, recorded %q", path, want, got)
	}
	f := &Features{Channels: ch, Height: h, Width: w}
	if f.Train, err = safetensors.Values[float32](train); err != nil {
		return nil, err
	}
	if f.Test, err = safetensors.Values[float32](test); err != nil {
		return nil, err
	}
	return f, nil
}

// featureSet is the features of one split's images: image i of the split
// is image index[i] of vals (i itself when index is nil).
type featureSet struct {
	f     *Features
	vals  []float32
	index []int
}

// batch returns the features of the split's images idx, [len(idx), C, H, W].
func (s featureSet) batch(idx []int) *tensor.Tensor {
	n := s.f.size()
	x := tensor.New(len(idx), s.f.Channels, s.f.Height, s.f.Width)
	for j, i := range idx {
		if s.index != nil {
			i = s.index[i]
		}
		copy(x.Data[j*n:(j+1)*n], s.vals[i*n:(i+1)*n])
	}
	return x
}

// scatterModel reports whether model is a ScatterNet head, which trains
// on FeaturesScatter.
func scatterModel(model string) bool {
	return model == ModelScatterLinear || model == ModelScatterCNN
}

// validateScatter checks the settings of a ScatterNet head: scattering
// features, which are fixed (no augmentation) and computed from pixels in
// [0, 1], one width, no dropout.
func (c *Config) validateScatter() error {
	switch {
	case c.Features != FeaturesScatter:
		return setting.Errorf("Features", strconv.Quote(c.Features), "%s: %s takes the 81×7×7 scattering features of 28×28 images", FeaturesScatter, c.Model)
	case c.Augment != "none":
		return setting.Errorf("Augment", strconv.Quote(c.Augment), "none: %s features are computed once, from the images as they are", FeaturesScatter)
	case c.Normalize != NormalizeNone:
		return setting.Errorf("Normalize", strconv.Quote(cmp.Or(c.Normalize, NormalizeChannel)), "%s: %s features are computed from pixels in [0, 1] and normalised per sample by the model", NormalizeNone, FeaturesScatter)
	case c.WidthDiv != 1:
		return setting.Errorf("WidthDiv", c.WidthDiv, "1: %s has one width", c.Model)
	case c.Dropout != 0:
		return setting.Errorf("Dropout", c.Dropout, "0: %s has no dropout", c.Model)
	}
	return nil
}

// scatterNet is the configuration of the run's ScatterNet head:
// models.DefaultScatterNet, the shape of ScatterTransform's features
// (checkFeatures), for classes classes.
func scatterNet(classes int) models.ScatterNetConfig {
	c := models.DefaultScatterNet
	c.Classes = classes
	return c
}

// checkFeatures refuses a run of Config.Features whose data has not had
// them computed, or has them in a shape other than the model's.
func (c *Config) checkFeatures(d *Data) error {
	if c.Features == "" {
		return nil
	}
	f, want := d.Features, models.DefaultScatterNet
	if f == nil {
		return setting.Errorf("Features", strconv.Quote(c.Features), "features the data has: compute them first (Data.ScatterFeatures)")
	}
	if f.Channels != want.Channels || f.Height != want.Side || f.Width != want.Side {
		return setting.Errorf("Features", strconv.Quote(c.Features), "features of %d×%d×%d, the shape %s takes; the data's are %d×%d×%d", want.Channels, want.Side, want.Side, c.Model, f.Channels, f.Height, f.Width)
	}
	return nil
}

// featureSets are the features of a run's training split sp (the images
// of trainSet, valSet) and of the test set; nil without Config.Features.
func (c *Config) featureSets(d *Data, sp *trainSplit, trainSet, valSet *cifardata.Dataset) map[*cifardata.Dataset]featureSet {
	if c.Features == "" {
		return nil
	}
	f := d.Features
	return map[*cifardata.Dataset]featureSet{
		trainSet: {f: f, vals: f.Train, index: sp.train},
		valSet:   {f: f, vals: f.Train, index: sp.valid},
		d.Test:   {f: f, vals: f.Test},
	}
}

// scatterTrainingBytes is the memory a plain step of a ScatterNet head
// on batches of batch images takes (with the momentum buffers): the
// parameters three times, and per image the features, their
// normalisation and the head's activations.
func scatterTrainingBytes(model string, classes, batch int) float64 {
	c := scatterNet(classes)
	in := float64(c.Channels * c.Side * c.Side)
	k := float64(classes)
	params, act := (in+1)*k, 2*in+k
	if model == ModelScatterCNN {
		half := float64((c.Side-1)/2 + 1)
		params = 16*(float64(c.Channels)*9+1) + 32*(16*9+1) + 32*(32*half*half+1) + (32+1)*k
		act = 2*in + 2*16*half*half + 2*32*half*half + 2*32 + k
	}
	return 4 * (params*3 + float64(batch)*act)
}
