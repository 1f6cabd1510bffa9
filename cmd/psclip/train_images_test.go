package main

import (
	"bytes"
	be "encoding/binary"
	"encoding/json"
	"fmt"
	"image"
	"image/png"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/psclip/psclip/experiments/images"
)

// writeIDX writes a tiny learnable data set in the MNIST layout (raw IDX
// files) into dir and returns dir: 28×28 grey images of 4 classes, class k
// a bright band across rows 6k..6k+5 over noise.
func writeIDX(t testing.TB, dir string, train, test int) string {
	t.Helper()
	r := rand.New(rand.NewPCG(7, 7))
	split := func(images, labels string, n int) {
		img := be.BigEndian.AppendUint32(nil, 0x0803)
		for _, d := range []int{n, 28, 28} {
			img = be.BigEndian.AppendUint32(img, uint32(d))
		}
		lab := be.BigEndian.AppendUint32(nil, 0x0801)
		lab = be.BigEndian.AppendUint32(lab, uint32(n))
		for i := range n {
			k := i % 4
			lab = append(lab, byte(k))
			for y := range 28 {
				for range 28 {
					v := r.IntN(100)
					if y/6 == k {
						v += 150
					}
					img = append(img, byte(v))
				}
			}
		}
		for name, b := range map[string][]byte{images: img, labels: lab} {
			if err := os.WriteFile(filepath.Join(dir, name), b, 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		t.Fatal(err)
	}
	split("train-images-idx3-ubyte", "train-labels-idx1-ubyte", train)
	split("t10k-images-idx3-ubyte", "t10k-labels-idx1-ubyte", test)
	return dir
}

// readEpochs returns the epoch records of a run's log, and the number of
// its norms lines whose noisy flags are as many as its norms.
func readEpochs(t *testing.T, out string) (epochs []images.EpochRecord, flagged int) {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(out, "log.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(strings.TrimSpace(string(b)), "\n") {
		var rec struct {
			images.EpochRecord
			Step  *int       `json:"step"`
			Norms []*float64 `json:"sample_norms"`
			Noisy []bool     `json:"noisy"`
		}
		if err := json.Unmarshal([]byte(line), &rec); err != nil {
			t.Fatalf("%v: %s", err, line)
		}
		switch {
		case rec.Step == nil:
			epochs = append(epochs, rec.EpochRecord)
		case len(rec.Noisy) == len(rec.Norms):
			flagged++
		}
	}
	return epochs, flagged
}

// TestTrainImagesIDX trains on IDX files with label noise: the run lists
// exactly round(F·N) noisy training images in noisy.json, logs test
// accuracy and the detection statistics every epoch and the noisy flags
// with the norms, records the noise in its configuration and data, and a
// resume with other noise is refused while one with the same noise
// continues.
func TestTrainImagesIDX(t *testing.T) {
	data := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 200, 40)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"train", "images", "--data", data, "--out", out, "--width-div", "4", "--batch", "16", "--epochs", "2",
		"--train-subset", "120", "--label-noise", "0.25", "--estimator", "ps-clip-sgd", "--clip", "1", "--log-norms"}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("train images: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "test") {
		t.Errorf("stdout %q names no test accuracy", stdout)
	}
	var noisy images.NoisyRecord
	if b, err := os.ReadFile(filepath.Join(out, images.NoisyFile)); err != nil || json.Unmarshal(b, &noisy) != nil {
		t.Fatalf("%s: %v\n%s", images.NoisyFile, err, b)
	}
	if len(noisy.Indices) != 30 || noisy.TrainImages != 120 || noisy.LabelNoise != 0.25 || noisy.LabelNoiseKind != "uniform" ||
		!slices.IsSorted(noisy.Indices) || noisy.Indices[len(noisy.Indices)-1] >= 200 {
		t.Errorf("%s: %d indices of %d images (want 30 of 120, below 200, ascending), noise %g %q",
			images.NoisyFile, len(noisy.Indices), noisy.TrainImages, noisy.LabelNoise, noisy.LabelNoiseKind)
	}
	for j, i := range noisy.Indices {
		if int(noisy.Labels[j]) == i%4 { // writeIDX's label of image i
			t.Errorf("noisy image %d keeps its label %d", i, i%4)
		}
	}
	epochs, flagged := readEpochs(t, out)
	if len(epochs) != 2 || flagged != 16 { // 8 steps an epoch
		t.Fatalf("log: %d epochs, %d norms lines with noisy flags; want 2 and 16", len(epochs), flagged)
	}
	for _, ep := range epochs {
		d := ep.Detection
		switch {
		case !(ep.TestAcc > 0) || !(ep.ValAcc > 0) || !(ep.TrainAcc > 0):
			t.Errorf("epoch %d: train %v, val %v, test %v accuracy", ep.Epoch, ep.TrainAcc, ep.ValAcc, ep.TestAcc)
		case d == nil:
			t.Errorf("epoch %d: no detection statistics", ep.Epoch)
		case d.Samples != 120 || d.Noisy != 30 || d.NoisyShare != 0.25 || d.NoisyClipped > d.Clipped || d.Clipped == 0:
			t.Errorf("epoch %d: detection %+v; want 120 samples, 30 noisy", ep.Epoch, *d)
		case float64(d.Precision) != float64(d.NoisyClipped)/float64(d.Clipped) || float64(d.Recall) != float64(d.NoisyClipped)/30:
			t.Errorf("epoch %d: precision %v, recall %v from %+v", ep.Epoch, d.Precision, d.Recall, *d)
		}
	}
	if b, err := os.ReadFile(filepath.Join(out, "result.json")); err != nil ||
		!strings.Contains(string(b), `"label_noise": 0.25`) || !strings.Contains(string(b), `"noisy_train_labels"`) {
		t.Errorf("result.json (%v): want the noise in the configuration and the data:\n%.2000s", err, b)
	}
	for _, other := range [][]string{{"--label-noise", "0.3"}, {"--label-noise-kind", "next"}, {"--label-noise", "0"}} {
		if code, _, stderr := runCLI(append(slices.Clone(args), append([]string{"--resume", "--epochs", "3"}, other...)...)...); code != 2 || !strings.Contains(stderr, "label_noise") {
			t.Errorf("resume with %v: exit %d, %q; want 2 naming label_noise", other, code, stderr)
		}
	}
	if code, _, stderr := runCLI(append(args, "--resume", "--epochs", "3")...); code != 0 {
		t.Fatalf("train images --resume --epochs 3: exit %d: %s", code, stderr)
	}
	if epochs, _ := readEpochs(t, out); len(epochs) != 3 {
		t.Errorf("after the resume: %d epochs, want 3", len(epochs))
	}
}

// TestTrainImagesModels: AlexNet-CIFAR with one input channel trains on the
// padded 28×28 images, with an estimator that clips no sample (no
// detection statistics), and learns the easy bands above chance.
func TestTrainImagesModels(t *testing.T) {
	data := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 200, 40)
	for _, c := range []struct {
		model string
		extra []string
	}{
		{"alexnet", []string{"--width-div", "16", "--estimator", "sgd", "--lr", "0.05", "--dropout", "0"}},
		{"small-cnn", []string{"--estimator", "clip-sgd", "--label-noise", "0.1", "--label-noise-kind", "next"}},
	} {
		out := filepath.Join(t.TempDir(), c.model)
		args := append([]string{"train", "images", "--data", data, "--out", out, "--model", c.model, "--batch", "16", "--epochs", "3"}, c.extra...)
		if code, _, stderr := runCLI(args...); code != 0 {
			t.Fatalf("%s: exit %d: %s", c.model, code, stderr)
		}
		epochs, _ := readEpochs(t, out)
		last := epochs[len(epochs)-1]
		if last.Detection != nil {
			t.Errorf("%s: detection statistics without per-sample clipping: %+v", c.model, *last.Detection)
		}
		if !(last.TestAcc > 0.5) {
			t.Errorf("%s: test accuracy %v after 3 epochs on 4 easy classes", c.model, last.TestAcc)
		}
	}
}

// TestExperimentImages runs the study command at its smallest: two
// methods, one seed, label noise; the tables name the methods.
func TestExperimentImages(t *testing.T) {
	data := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 120, 40)
	out := filepath.Join(t.TempDir(), "exp")
	code, stdout, stderr := runCLI("experiment", "images", "--data", data, "--out", out, "--methods", "sgd,ps-clip-sgd", "--seeds", "1",
		"--epochs", "1", "--batch", "16", "--width-div", "4", "--label-noise", "0.2")
	if code != 0 {
		t.Fatalf("experiment images: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "SGD") || !strings.Contains(stdout, "PS-Clip-SGD γ=10") {
		t.Errorf("stdout:\n%s", stdout)
	}
	if _, err := os.Stat(filepath.Join(out, "runs", "ps-clip-sgd_gamma=10", "seed=1", images.NoisyFile)); err != nil {
		t.Error(err)
	}
}

// TestTrainImagesDPSGD trains tanh-cnn with dp-sgd on IDX files: with a
// fixed noise seed the log says the run is not private, stdout and
// result.json give ε at δ, every epoch logs its ε, and --sampling shuffle
// (only in a run marked not private) says that the batches are not the
// Poisson samples the accounting assumes; --target-epsilon picks σ and
// says which.
func TestTrainImagesDPSGD(t *testing.T) {
	data := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 200, 40)
	base := []string{"train", "images", "--data", data, "--model", "tanh-cnn", "--batch", "16", "--epochs", "2",
		"--estimator", "dp-sgd", "--clip", "0.5", "--delta", "1e-3"}
	for _, tc := range []struct {
		name   string
		args   []string
		stderr []string
	}{
		{"fixed seed", []string{"--noise-multiplier", "1", "--noise-seed", "4", "--micro-batch", "5"}, []string{"NOT private"}},
		{"shuffle", []string{"--noise-multiplier", "1", "--sampling", "shuffle", "--release-unprotected"}, []string{"NOT private", "shuffled batches, not the Poisson samples"}},
		{"target ε", []string{"--target-epsilon", "4"}, []string{"noise multiplier σ = ", "for ε = 4 at δ = 0.001"}},
	} {
		out := filepath.Join(t.TempDir(), "run")
		code, stdout, stderr := runCLI(append(append(slices.Clone(base), tc.args...), "--out", out)...)
		if code != 0 {
			t.Fatalf("%s: exit %d: %s", tc.name, code, stderr)
		}
		for _, want := range tc.stderr {
			if !strings.Contains(stderr, want) {
				t.Errorf("%s: stderr does not say %q:\n%s", tc.name, want, stderr)
			}
		}
		if tc.name == "target ε" && strings.Contains(stderr, "NOT private") {
			t.Errorf("%s: a secure run says it is not private", tc.name)
		}
		var res struct {
			Epsilon, Delta float64
			Curve          []struct{ Epsilon float64 }
		}
		b, err := os.ReadFile(filepath.Join(out, "result.json"))
		if err == nil {
			err = json.Unmarshal(b, &res)
		}
		if err != nil || res.Delta != 1e-3 || !(res.Epsilon > 0) || len(res.Curve) != 2 || !(res.Curve[0].Epsilon < res.Curve[1].Epsilon) || res.Curve[1].Epsilon != res.Epsilon {
			t.Errorf("%s: result.json (%v): ε %v δ %v, epochs' ε %v", tc.name, err, res.Epsilon, res.Delta, res.Curve)
		}
		if !strings.Contains(stdout, fmt.Sprintf("ε = %.4g at δ = 0.001", res.Epsilon)) {
			t.Errorf("%s: stdout does not give ε %v:\n%s", tc.name, res.Epsilon, stdout)
		}
		if tc.name == "target ε" && !(res.Epsilon <= 4 && res.Epsilon > 3.8) {
			t.Errorf("target ε 4: spent %v", res.Epsilon)
		}
	}
}

// Issue 26: a batch larger than the training split is the whole split, and
// the memory check counts the batch used, not the one asked for: a
// million-image batch on 36 images trains.
func TestBatchLargerThanData(t *testing.T) {
	data := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 40, 8)
	out := filepath.Join(t.TempDir(), "out")
	r := psclip(t, "", nil, "train", "images", "--data", data, "--batch", "1000000", "--epochs", "1", "--out", out)
	if r.code != 0 {
		t.Fatalf("exit %d: %s", r.code, r.stderr)
	}
}

// TestTrainImagesNoValidation: --val-fraction 0 trains on every training
// image (40: five steps of 8), logs null validation figures, still
// evaluates the test set, and says so on stdout; result.json keeps the
// share, so that a resume with the default split is refused as another
// configuration.
func TestTrainImagesNoValidation(t *testing.T) {
	data := writeIDX(t, filepath.Join(t.TempDir(), "idx"), 40, 8)
	out := filepath.Join(t.TempDir(), "run")
	args := []string{"train", "images", "--data", data, "--out", out, "--batch", "8", "--epochs", "1", "--val-fraction", "0"}
	code, stdout, stderr := runCLI(args...)
	if code != 0 {
		t.Fatalf("exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "no validation split, test ") {
		t.Errorf("stdout does not say there is no validation split:\n%s", stdout)
	}
	var res struct {
		Config struct {
			ValFraction *float64 `json:"val_fraction"`
		} `json:"config"`
		ValAcc  *float64 `json:"val_acc"`
		TestAcc *float64 `json:"test_acc"`
		Curve   []struct {
			ValAcc  *float64 `json:"val_acc"`
			ValLoss *float64 `json:"val_loss"`
			TestAcc *float64 `json:"test_acc"`
		} `json:"curve"`
	}
	b, err := os.ReadFile(filepath.Join(out, "result.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	if err != nil || res.Config.ValFraction == nil || *res.Config.ValFraction != 0 || res.ValAcc != nil || res.TestAcc == nil ||
		len(res.Curve) != 1 || res.Curve[0].ValAcc != nil || res.Curve[0].ValLoss != nil || res.Curve[0].TestAcc == nil {
		t.Errorf("result.json (%v): want val_fraction 0, null validation, a test accuracy:\n%.1500s", err, b)
	}
	resume := slices.Clone(args[:len(args)-2])
	if code, _, stderr := runCLI(append(resume, "--resume", "--epochs", "2")...); code != 2 || !strings.Contains(stderr, "val_fraction") {
		t.Errorf("resume without --val-fraction: exit %d, %q; want 2 naming val_fraction", code, stderr)
	}
}

// TestTrainImagesFolder trains on one folder of PNG files per class, of
// another size than the model's input (40×40, resized to 32×32), with the
// test set taken from the same folders; a folder with one class is
// refused in one line naming it, with nothing written.
func TestTrainImagesFolder(t *testing.T) {
	data := filepath.Join(t.TempDir(), "folders")
	r := rand.New(rand.NewPCG(7, 7))
	for k, class := range []string{"bands0", "bands1", "bands2", "bands3"} {
		if err := os.MkdirAll(filepath.Join(data, class), 0o755); err != nil {
			t.Fatal(err)
		}
		for i := range 30 {
			img := image.NewGray(image.Rect(0, 0, 40, 40))
			for j := range img.Pix {
				v := r.IntN(100)
				if j/40/10 == k {
					v += 150
				}
				img.Pix[j] = byte(v)
			}
			var b bytes.Buffer
			if err := png.Encode(&b, img); err != nil {
				t.Fatal(err)
			}
			if err := os.WriteFile(filepath.Join(data, class, fmt.Sprintf("%02d.png", i)), b.Bytes(), 0o644); err != nil {
				t.Fatal(err)
			}
		}
	}
	out := filepath.Join(t.TempDir(), "run")
	code, stdout, stderr := runCLI("train", "images", "--data", data, "--out", out, "--width-div", "4", "--batch", "16", "--epochs", "2")
	if code != 0 {
		t.Fatalf("train images on class folders: exit %d: %s", code, stderr)
	}
	if !strings.Contains(stdout, "test") {
		t.Errorf("stdout %q names no test accuracy", stdout)
	}
	if epochs, _ := readEpochs(t, out); len(epochs) != 2 || !(epochs[1].TestAcc > 0.5) {
		t.Errorf("log: %d epochs, last %+v; want 2, the bands learnt above chance", len(epochs), epochs)
	}
	one := filepath.Join(t.TempDir(), "one")
	if err := os.CopyFS(filepath.Join(one, "bands0"), os.DirFS(filepath.Join(data, "bands0"))); err != nil {
		t.Fatal(err)
	}
	bad := filepath.Join(t.TempDir(), "bad")
	code, _, stderr = runCLI("train", "images", "--data", one, "--out", bad)
	if code != 2 || strings.Count(strings.TrimSpace(stderr), "\n") > 0 || !strings.Contains(stderr, "at least 2") {
		t.Errorf("one class folder: exit %d, %q; want 2 and one line", code, stderr)
	}
	if _, err := os.Stat(bad); !os.IsNotExist(err) {
		t.Errorf("the refused run left %s behind (%v)", bad, err)
	}
}
