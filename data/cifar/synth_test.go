package cifar

import (
	"bytes"
	"math"
	"runtime"
	"slices"
	"testing"
)

func smallSynth(t testing.TB, cfg SynthConfig) *Synthetic {
	t.Helper()
	s, err := Synthesize(cfg)
	if err != nil {
		t.Fatal(err)
	}
	return s
}

func sameDataset(a, b *Dataset) bool {
	return a.Classes == b.Classes && a.Grey == b.Grey && bytes.Equal(a.Images, b.Images) && bytes.Equal(a.Labels, b.Labels) && bytes.Equal(a.Coarse, b.Coarse)
}

func TestSynthesizeIsDeterministic(t *testing.T) {
	cfg := SynthConfig{Train: 97, Test: 13, Classes: 7, Seed: 3, Noise: 20, Outliers: 0.2}
	defer runtime.GOMAXPROCS(runtime.GOMAXPROCS(1))
	a := smallSynth(t, cfg)
	runtime.GOMAXPROCS(3)
	b := smallSynth(t, cfg)
	if !sameDataset(a.Train, b.Train) || !sameDataset(a.Test, b.Test) || !slices.Equal(a.Outliers, b.Outliers) {
		t.Fatal("same config, different data under GOMAXPROCS 1 and 3")
	}
	cfg.Seed = 4
	if c := smallSynth(t, cfg); bytes.Equal(a.Train.Images, c.Train.Images) {
		t.Fatal("seeds 3 and 4 gave the same images")
	}
}

func TestSynthesizeLabels(t *testing.T) {
	s := smallSynth(t, SynthConfig{Train: 103, Test: 20, Classes: 10, Seed: 1})
	counts := make([]int, 10)
	for i, l := range s.Train.Labels {
		counts[l]++
		if s.Train.Coarse[i] != l/5 {
			t.Fatalf("image %d: coarse %d for class %d, want %d", i, s.Train.Coarse[i], l, l/5)
		}
	}
	for c, n := range counts {
		if n != 10 && n != 11 {
			t.Errorf("class %d has %d of 103 images, want a balanced 10 or 11", c, n)
		}
	}
	if len(s.Outliers) != 0 {
		t.Errorf("%d outliers without asking", len(s.Outliers))
	}
}

// TestSynthesizeOutliers compares a set with outliers to the same set
// without: only the chosen images change, each in the way its kind says.
func TestSynthesizeOutliers(t *testing.T) {
	for _, kind := range []OutlierKind{Mixed, Mislabelled, Corrupted} {
		cfg := SynthConfig{Train: 200, Test: 30, Classes: 5, Seed: 8, Noise: 10}
		clean := smallSynth(t, cfg)
		cfg.Outliers, cfg.OutlierKind = 0.13, kind
		s := smallSynth(t, cfg)
		if !sameDataset(clean.Test, s.Test) {
			t.Errorf("%v: outliers changed the test set", kind)
		}
		if len(s.Outliers) != 26 || !slices.IsSorted(s.Outliers) {
			t.Fatalf("%v: outliers %v, want 26 ascending", kind, s.Outliers)
		}
		count := map[OutlierKind]int{}
		isOutlier := map[int]OutlierKind{}
		for j, i := range s.Outliers {
			isOutlier[i] = s.Kinds[j]
			count[s.Kinds[j]]++
		}
		for i := range s.Train.Len() {
			sameImg := bytes.Equal(s.Train.Image(i), clean.Train.Image(i))
			sameLabel := s.Train.Labels[i] == clean.Train.Labels[i]
			k, out := isOutlier[i]
			switch {
			case !out && (!sameImg || !sameLabel):
				t.Fatalf("%v: image %d is no outlier but changed", kind, i)
			case out && k == Mislabelled && (!sameImg || sameLabel):
				t.Fatalf("%v: mislabelled image %d: image same %v, label same %v", kind, i, sameImg, sameLabel)
			case out && k == Corrupted && (sameImg || !sameLabel):
				t.Fatalf("%v: corrupted image %d: image same %v, label same %v", kind, i, sameImg, sameLabel)
			}
		}
		want := map[OutlierKind]map[OutlierKind]int{Mixed: {Mislabelled: 13, Corrupted: 13}, Mislabelled: {Mislabelled: 26}, Corrupted: {Corrupted: 26}}[kind]
		if count[Mislabelled] != want[Mislabelled] || count[Corrupted] != want[Corrupted] {
			t.Errorf("%v: kinds %v, want %v", kind, count, want)
		}
	}
}

// TestSynthesizeIsLearnable checks that the classes carry signal: a nearest
// class-mean classifier, far weaker than a CNN, beats chance by a wide
// margin on the clean test set, even trained on data with outliers.
func TestSynthesizeIsLearnable(t *testing.T) {
	const classes = 10
	s := smallSynth(t, SynthConfig{Train: 1000, Test: 300, Classes: classes, Seed: 2, Noise: 24, Outliers: 0.1})
	means := make([][]float64, classes)
	counts := make([]int, classes)
	for c := range means {
		means[c] = make([]float64, ImageBytes)
	}
	for i, l := range s.Train.Labels {
		counts[l]++
		for k, v := range s.Train.Image(i) {
			means[l][k] += float64(v)
		}
	}
	correct := 0
	for i, l := range s.Test.Labels {
		best, bestD := -1, math.Inf(1)
		for c := range classes {
			d := 0.0
			for k, v := range s.Test.Image(i) {
				e := float64(v) - means[c][k]/float64(counts[c])
				d += e * e
			}
			if d < bestD {
				best, bestD = c, d
			}
		}
		if best == int(l) {
			correct++
		}
	}
	acc := float64(correct) / float64(s.Test.Len())
	t.Logf("nearest class-mean test accuracy %.3f (chance %.3f)", acc, 1.0/classes)
	if acc < 0.35 {
		t.Errorf("nearest class-mean accuracy %.3f, want ≥ 0.35", acc)
	}
}

func TestSynthConfigErrors(t *testing.T) {
	good := SynthConfig{Train: 10, Test: 10, Classes: 10, Noise: 5}
	for _, tc := range []struct {
		name string
		edit func(*SynthConfig)
	}{
		{"no training images", func(c *SynthConfig) { c.Train = 0 }},
		{"too many training images", func(c *SynthConfig) { c.Train = MaxRecords + 1 }},
		{"no test images", func(c *SynthConfig) { c.Test = 0 }},
		{"one class", func(c *SynthConfig) { c.Classes = 1 }},
		{"101 classes", func(c *SynthConfig) { c.Classes = 101 }},
		{"negative outliers", func(c *SynthConfig) { c.Outliers = -0.1 }},
		{"all outliers", func(c *SynthConfig) { c.Outliers = 1 }},
		{"NaN outliers", func(c *SynthConfig) { c.Outliers = math.NaN() }},
		{"negative noise", func(c *SynthConfig) { c.Noise = -1 }},
		{"bad kind", func(c *SynthConfig) { c.OutlierKind = 7 }},
	} {
		cfg := good
		tc.edit(&cfg)
		if _, err := Synthesize(cfg); err == nil {
			t.Errorf("%s: no error", tc.name)
		}
	}
	if _, err := Synthesize(good); err != nil {
		t.Errorf("good config: %v", err)
	}
}
