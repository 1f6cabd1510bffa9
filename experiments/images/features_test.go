package images

import (
	"bytes"
	"context"
	"errors"
	"os"
	"path/filepath"
	"runtime"
	"slices"
	"strings"
	"sync"
	"testing"

	cifardata "github.com/psclip/psclip/data/cifar"
	"github.com/psclip/psclip/estimator"
	"github.com/psclip/psclip/internal/loop"
	"github.com/psclip/psclip/run"
	"github.com/psclip/psclip/scatter"
	"github.com/psclip/psclip/setting"
)

// smallImages is greyData with every image cut to the canvas's central
// 28×28 (a black border, as data/idx leaves around MNIST's images).
func smallImages(t testing.TB) *Data {
	d := greyData(t)
	for _, s := range []*cifardata.Dataset{d.Train, d.Test} {
		for i := range s.Len() {
			img := s.Image(i)
			for a := range cifardata.Side {
				for b := range cifardata.Side {
					if min(a, b) < canvasBorder || max(a, b) >= cifardata.Side-canvasBorder {
						img[a*cifardata.Side+b] = 0
					}
				}
			}
		}
	}
	return d
}

var (
	scatterOnce sync.Once
	scatterMemo *Data
)

// scatterData is smallImages with its scattering features, computed once
// for the package's tests (without a cache).
func scatterData(t testing.TB) *Data {
	scatterOnce.Do(func() {
		d := smallImages(t)
		if err := d.ScatterFeatures("", nil); err != nil {
			t.Fatal(err)
		}
		scatterMemo = d
	})
	if scatterMemo == nil {
		t.Fatal("the scattering features failed in an earlier test")
	}
	d := *scatterMemo
	return &d
}

// TestScatterFeatures checks the features against package scatter applied
// to the central 28×28 pixels scaled to [0, 1], their independence of
// GOMAXPROCS, and the cache: a valid file is used, a damaged one, one of
// other images or of another transform under the same name is reported
// and computed again, never used.
func TestScatterFeatures(t *testing.T) {
	d := scatterData(t)
	f := d.Features
	if f.Channels != 81 || f.Height != 7 || f.Width != 7 || len(f.Train) != d.Train.Len()*81*49 || len(f.Test) != d.Test.Len()*81*49 {
		t.Fatalf("features %d×%d×%d, %d and %d values", f.Channels, f.Height, f.Width, len(f.Train), len(f.Test))
	}
	tr, err := scatter.New(scatter.Config{Height: 28, Width: 28, J: 2, L: 8})
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 7, d.Test.Len() - 1} {
		px := make([]float32, 28*28)
		img := d.Test.Image(i)
		for a := range 28 {
			for b := range 28 {
				px[a*28+b] = float32(img[(a+2)*32+b+2]) / 255
			}
		}
		want := make([]float32, tr.Size())
		if err := tr.Apply(want, px); err != nil {
			t.Fatal(err)
		}
		if !slices.Equal(f.Test[i*tr.Size():(i+1)*tr.Size()], want) {
			t.Errorf("test image %d: features differ from the transform of its central 28×28 pixels", i)
		}
	}

	// The cache on the first 20 training and 10 test images.
	few := func() *Data {
		d := smallImages(t)
		d.Train, d.Test = d.Train.Subset(firstN(20)), d.Test.Subset(firstN(10))
		return d
	}
	size := tr.Size()
	f = &Features{Channels: 81, Height: 7, Width: 7, Train: f.Train[:20*size], Test: f.Test[:10*size]}
	one := few()
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	dir := t.TempDir()
	var log bytes.Buffer
	if err := one.ScatterFeatures(dir, &log); err != nil {
		t.Fatal(err)
	}
	runtime.GOMAXPROCS(2)
	if !slices.Equal(one.Features.Train, f.Train) || !slices.Equal(one.Features.Test, f.Test) {
		t.Fatal("the features depend on GOMAXPROCS")
	}
	files, _ := filepath.Glob(filepath.Join(dir, "scatter-*.safetensors"))
	if len(files) != 1 || !strings.Contains(log.String(), "cached in") {
		t.Fatalf("cache files %v; log:\n%s", files, log.String())
	}
	path := files[0]
	good, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}

	other := scatterKey(one)
	other.Images = strings.Repeat("0", 64)
	for _, tc := range []struct {
		name string
		edit func() // of the cache file
		want string // in the progress line; "" for a cache used as it is
	}{
		{"valid", func() {}, ""},
		{"damaged value", func() {
			b := slices.Clone(good)
			b[len(b)-5] ^= 0x40
			os.WriteFile(path, b, 0o644)
		}, "damaged"},
		{"truncated", func() { os.WriteFile(path, good[:len(good)-4], 0o644) }, path},
		{"other images", func() {
			if err := writeFeatures(path, other, f); err != nil {
				t.Fatal(err)
			}
		}, "other images"},
		{"another transform", func() {
			k := scatterKey(one)
			k.Transform.L = 6
			if err := writeFeatures(path, k, f); err != nil {
				t.Fatal(err)
			}
		}, "another transform"},
		{"another version", func() {
			k := scatterKey(one)
			k.Version++
			if err := writeFeatures(path, k, f); err != nil {
				t.Fatal(err)
			}
		}, "another transform"},
	} {
		tc.edit()
		d := few()
		var log bytes.Buffer
		if err := d.ScatterFeatures(dir, &log); err != nil {
			t.Fatalf("%s: %v", tc.name, err)
		}
		if !slices.Equal(d.Features.Train, f.Train) || !slices.Equal(d.Features.Test, f.Test) {
			t.Errorf("%s: features differ from those computed", tc.name)
		}
		computed := strings.Contains(log.String(), "computing them again")
		if computed != (tc.want != "") || !strings.Contains(log.String(), tc.want) {
			t.Errorf("%s: log\n%s\nwant it to recompute: %v, naming %q", tc.name, log.String(), tc.want != "", tc.want)
		}
		if b, err := os.ReadFile(path); err != nil || !bytes.Equal(b, good) {
			t.Errorf("%s: the cache file is not the valid one after the call (%v)", tc.name, err)
		}
	}
}

// firstN is 0, 1, …, n−1.
func firstN(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// TestScatterFeaturesRefuse checks that RGB images, and grey ones larger
// than 28×28, are refused with an error that says why.
func TestScatterFeaturesRefuse(t *testing.T) {
	if err := testData(t).ScatterFeatures("", nil); err == nil || !strings.Contains(err.Error(), "RGB") {
		t.Errorf("RGB images: %v", err)
	}
	d := smallImages(t)
	d.Test.Image(3)[1] = 9
	if err := d.ScatterFeatures("", nil); err == nil || !strings.Contains(err.Error(), "test image 3 is larger than 28×28") {
		t.Errorf("a 32×32 image: %v", err)
	}
	if d.Features != nil {
		t.Error("features set after an error")
	}
}

// scatterConfig is dpConfig for a ScatterNet head on the features.
func scatterConfig(model string, noiseSeed uint64) Config {
	c := dpConfig(noiseSeed)
	c.Model, c.Features, c.Dropout, c.WidthDiv, c.Augment = model, FeaturesScatter, 0, 1, "none"
	c.Clip, c.LR, c.Momentum = 0.1, 4, 0.9
	return c
}

// TestScatterConfig checks that features and models go together: a
// ScatterNet head takes the scattering features, without augmentation,
// from pixels in [0, 1], and nothing else; a pixel model takes no
// features; a run of features the data lacks is refused. Each refusal is
// a *setting.Error naming the field.
func TestScatterConfig(t *testing.T) {
	d := scatterData(t)
	for _, tc := range []struct {
		name  string
		edit  func(c *Config)
		data  *Data
		field string
	}{
		{"linear", func(c *Config) {}, d, ""},
		{"cnn", func(c *Config) { c.Model = ModelScatterCNN }, d, ""},
		{"no features", func(c *Config) { c.Features = "" }, d, "Features"},
		{"other features", func(c *Config) { c.Features = "pixels" }, d, "Features"},
		{"features for tanh-cnn", func(c *Config) { c.Model = ModelTanhCNN }, d, "Features"},
		{"features for alexnet", func(c *Config) { c.Model, c.WidthDiv = "", 32 }, d, "Features"},
		{"augmented", func(c *Config) { c.Augment = "cropflip" }, d, "Augment"},
		{"channel statistics", func(c *Config) {
			c.Normalize, c.Spec, c.Delta, c.MicroBatch = "", estimator.Spec{Estimator: "sgd"}, 0, 0
		}, d, "Normalize"},
		{"not computed", func(c *Config) {}, smallImages(t), "Features"},
	} {
		c := scatterConfig(ModelScatterLinear, 1)
		tc.edit(&c)
		r, err := New(c, tc.data, RunOptions{})
		var se *setting.Error
		switch {
		case tc.field == "" && err != nil:
			t.Errorf("%s: %v", tc.name, err)
		case tc.field != "" && (!errors.As(err, &se) || se.Field != tc.field):
			t.Errorf("%s: %v, want a *setting.Error naming %s", tc.name, err, tc.field)
		}
		if err == nil {
			r.Close()
		}
	}
}

// TestScatterRun trains both ScatterNet heads on the features with
// dp-sgd: a run interrupted after 5 steps and resumed ends with the
// weights and log of one that was not, and the linear head learns the
// synthetic classes without noise.
func TestScatterRun(t *testing.T) {
	d := scatterData(t)
	for _, model := range []string{ModelScatterLinear, ModelScatterCNN} {
		t.Run(model, func(t *testing.T) {
			cfg := released(scatterConfig(model, 7))
			whole, parts := t.TempDir(), t.TempDir()
			want, err := trainRun(t, cfg, d, RunOptions{Out: whole})
			if err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithCancel(context.Background())
			defer cancel()
			r, err := New(cfg, d, RunOptions{Out: parts, AfterStep: func(done int) {
				if done == 5 {
					cancel()
				}
			}})
			if err != nil {
				t.Fatal(err)
			}
			if _, err := r.Train(ctx); !errors.Is(err, loop.ErrInterrupted) {
				t.Fatalf("interrupted run: %v", err)
			}
			got, err := trainRun(t, cfg, d, RunOptions{Out: parts, Resume: true})
			if err != nil {
				t.Fatal(err)
			}
			sameCheckpoints(t, filepath.Join(whole, run.CheckpointFile), filepath.Join(parts, run.CheckpointFile))
			if a, b := logStats(t, whole), logStats(t, parts); a != b {
				t.Errorf("logs differ:\nuninterrupted %s\nresumed       %s", a, b)
			}
			if got.TestAcc != want.TestAcc || eps(got.Epsilon) != eps(want.Epsilon) || !(eps(want.Epsilon) > 0) {
				t.Errorf("resumed test accuracy %v, ε %v; uninterrupted %v, %v", got.TestAcc, eps(got.Epsilon), want.TestAcc, eps(want.Epsilon))
			}
		})
	}
	c := scatterConfig(ModelScatterLinear, 1)
	c.NoiseMultiplier, c.Epochs = 0.01, 4
	s, err := trainRun(t, released(c), d, RunOptions{Out: t.TempDir()})
	if err != nil {
		t.Fatal(err)
	}
	if !(s.TestAcc > 0.6) {
		t.Errorf("%s: test accuracy %v after %d epochs on 4 separable classes, want above 0.6 (chance: 0.25)", c.Model, s.TestAcc, c.Epochs)
	}
}
