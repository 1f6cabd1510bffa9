package main

import (
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// TestTrainImagesScatter trains the ScatterNet heads on the scattering
// features of IDX images (reporting the mean weights' accuracy too): the first run computes and caches them, the
// next reads the cache; a model that takes pixels refuses the features,
// a ScatterNet head refuses pixels, CIFAR's RGB images are refused, and so
// is a weights' average over more steps than the run's, each with exit
// status 2 naming the flag.
func TestTrainImagesScatter(t *testing.T) {
	data := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 200, 40)
	cache := t.TempDir()
	base := []string{"train", "images", "--data", data, "--features", "scatter", "--features-cache", cache,
		"--batch", "16", "--epochs", "1", "--estimator", "sgd", "--lr", "0.5", "--average-steps", "3"}
	for i, model := range []string{"scatter-linear", "scatter-cnn"} {
		code, stdout, stderr := runCLI(append(slices.Clone(base), "--model", model, "--out", filepath.Join(t.TempDir(), "run"))...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", model, code, stderr)
		}
		if computed := strings.Contains(stderr, "scatter features: 200/200 images"); computed != (i == 0) {
			t.Errorf("%s: features computed %v, want %v (run %d, cache %s):\n%s", model, computed, i == 0, i, cache, stderr)
		}
		if !strings.Contains(stdout, "test") || !strings.Contains(stdout, "(the mean weights of the last 3 steps: ") {
			t.Errorf("%s: stdout %q names no test accuracy, or none of the mean weights", model, stdout)
		}
	}
	if files, _ := filepath.Glob(filepath.Join(cache, "scatter-*.safetensors")); len(files) != 1 {
		t.Errorf("cache files %v, want one", files)
	}
	cifar := filepath.Join(t.TempDir(), "cifar")
	if code, _, stderr := runCLI("data", "synth-cifar", "--out", cifar, "--train", "40", "--test", "10", "--classes", "4"); code != 0 {
		t.Fatalf("data synth-cifar: %s", stderr)
	}
	for _, tc := range []struct {
		args []string
		want string
	}{
		{[]string{"--model", "tanh-cnn"}, "--features"},
		{[]string{"--model", "small-cnn"}, "--features"},
		{[]string{"--model", "scatter-linear", "--features", ""}, "--features"},
		{[]string{"--model", "scatter-cnn", "--augment", "cropflip"}, "--augment"},
		{[]string{"--model", "scatter-linear", "--average-steps", "14"}, "--average-steps"}, // a run of 12 steps (16 of 180 images)
		{[]string{"--model", "scatter-linear", "--data", cifar}, "--features scatter: the training images are RGB"},
	} {
		code, _, stderr := runCLI(append(slices.Clone(base), append(tc.args, "--out", filepath.Join(t.TempDir(), "run"))...)...)
		if code != 2 || !strings.Contains(stderr, tc.want) {
			t.Errorf("%v: exit %d, %q; want 2 naming %s", tc.args, code, stderr, tc.want)
		}
	}
}
