package main

import (
	"bytes"
	"encoding/json"
	"os"
	"path/filepath"
	"reflect"
	"strings"
	"testing"
)

// TestSameResultsOnOneAndTwoThreads runs every command that computes
// something from a seed with GOMAXPROCS=1 and GOMAXPROCS=2 and requires
// bit-identical results: checkpoint and exported tensors, logs and JSON
// results (timings aside), and JSON printed on stdout. The models are sized
// so that the parallel paths (GEMM blocks, per-sample norms, attention
// heads, gradient spans of 32k elements) split work among both threads.
func TestSameResultsOnOneAndTwoThreads(t *testing.T) {
	cifarArgs := []string{"train", "cifar", "--data", cifarData(t), "--width-div", "16", "--batch", "32", "--epochs", "1",
		"--augment", "cropflip", "--dropout", "0.5", "--lr", "0.05"}
	gptArgs := []string{"train", "gpt", "--text", textCorpus(t), "--n-layer", "1", "--n-embd", "64", "--n-head", "4",
		"--block-size", "32", "--micro-batch", "4", "--accum", "2", "--steps", "15", "--warmup", "3", "--lr", "3e-3",
		"--dropout", "0.1", "--eval-interval", "5", "--eval-iters", "2"}
	cases := []struct {
		name string
		args []string // "OUT" stands for the output directory
		// stdout: compare what is printed; files: compare these outputs.
		stdout bool
		files  []string
	}{
		{"train cifar ps-clip-sgd", append(cifarArgs, "--estimator", "ps-clip-sgd", "--clip", "1", "--out", "OUT"), false,
			[]string{ckptName, "log.jsonl", "result.json"}},
		{"train cifar clip-sgd", append(cifarArgs, "--estimator", "clip-sgd", "--clip", "0.5", "--out", "OUT"), false,
			[]string{ckptName, "log.jsonl", "result.json"}},
		{"train images label noise", []string{"train", "images", "--data", writeIDX(t, filepath.Join(t.TempDir(), "idx"), 200, 40),
			"--batch", "32", "--epochs", "1", "--train-subset", "150", "--label-noise", "0.3", "--estimator", "ps-clip-sgd", "--clip", "1",
			"--out", "OUT"}, false, []string{ckptName, "log.jsonl", "result.json", "noisy.json"}},
		{"train gpt per-sample", append(gptArgs, "--clip-mode", "per-sample", "--clip", "0.5", "--out", "OUT"), false,
			[]string{ckptName, "log.jsonl"}},
		{"train gpt micro-batch", append(gptArgs, "--clip-mode", "micro-batch", "--clip", "0.5", "--out", "OUT"), false,
			[]string{ckptName, "log.jsonl"}},
		{"train gpt corrupted", append(gptArgs, "--clip-mode", "per-sample", "--clip", "0.5", "--corrupt", "0.25", "--corrupt-layout", "clustered",
			"--corrupt-kind", "repeat", "--out", "OUT"), false, []string{ckptName, "log.jsonl", "result.json"}},
		{"train table ps-clip-auto", []string{"train", "table", "--data", writeTable(t, 600, 1), "--target", "label", "--hidden", "64,64",
			"--batch", "128", "--epochs", "2", "--estimator", "ps-clip-auto", "--out", "OUT"}, false, []string{ckptName, "log.jsonl", "result.json"}},
		{"quadratic", []string{"quadratic", "--runs", "3", "--T", "100", "--json",
			"--methods", "sgd,clip-sgd,nsgd,ps-clip-sgd,ps-clip-auto,ps-clip-quantile,auto-clip"}, true, nil},
		{"highprob", []string{"highprob", "--runs", "100", "--T", "30", "--json"}, true, nil},
		{"tail quadratic", []string{"tail", "quadratic", "--runs", "2", "--T", "100", "--p", "1.5", "--json"}, true, nil},
		{"persample alexnet-cifar", []string{"persample", "--model", "alexnet-cifar", "--width-div", "8", "--classes", "10",
			"--batch", "6", "--out", "OUT"}, false, []string{"model.safetensors", "batch.safetensors", "norms.json"}},
		{"persample gpt", []string{"persample", "--model", "gpt", "--n-layer", "2", "--n-embd", "64", "--batch", "4",
			"--block-size", "32", "--out", "OUT"}, false, []string{"model.safetensors", "batch.safetensors", "norms.json"}},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			var dirs, outs []string
			for _, procs := range []string{"1", "2"} {
				dir := t.TempDir()
				args := make([]string, len(tc.args))
				for i, a := range tc.args {
					args[i] = strings.ReplaceAll(a, "OUT", dir)
				}
				r := mustRun(t, []string{"GOMAXPROCS=" + procs}, args...)
				dirs, outs = append(dirs, dir), append(outs, r.stdout)
			}
			if tc.stdout && withoutProvenance(outs[0]) != withoutProvenance(outs[1]) {
				t.Errorf("stdout differs:\nGOMAXPROCS=1:\n%s\nGOMAXPROCS=2:\n%s", outs[0], outs[1])
			}
			for _, f := range tc.files {
				a, b := filepath.Join(dirs[0], f), filepath.Join(dirs[1], f)
				switch filepath.Ext(f) {
				case ".safetensors":
					sameTensors(t, a, b)
				case ".jsonl":
					sameLog(t, a, b)
				case ".json":
					sameJSON(t, a, b)
				}
			}
		})
	}
}

// sameJSON fails the test unless the JSON files a and b are equal apart
// from timing fields (names ending in "_s", at any depth) and provenance
// records, which say where and when a result was made (threads, load,
// times), not what it is.
func sameJSON(t *testing.T, a, b string) {
	t.Helper()
	var va, vb any
	for _, x := range []struct {
		path string
		v    *any
	}{{a, &va}, {b, &vb}} {
		data, err := os.ReadFile(x.path)
		if err != nil {
			t.Fatal(err)
		}
		dec := json.NewDecoder(bytes.NewReader(data))
		dec.UseNumber() // compare numbers as printed, not as float64
		if err := dec.Decode(x.v); err != nil {
			t.Fatalf("%s: %v", x.path, err)
		}
		dropTimings(*x.v)
	}
	if !reflect.DeepEqual(va, vb) {
		t.Errorf("%s and %s differ:\n%v\n%v", a, b, va, vb)
	}
}

func dropTimings(v any) {
	switch v := v.(type) {
	case map[string]any:
		for k, x := range v {
			if strings.HasSuffix(k, "_s") || k == "provenance" {
				delete(v, k)
			} else {
				dropTimings(x)
			}
		}
	case []any:
		for _, x := range v {
			dropTimings(x)
		}
	}
}

// withoutProvenance is a JSON object's text without its "provenance" key,
// which names the thread count and the load; other text is returned as it
// is.
func withoutProvenance(s string) string {
	var m map[string]json.RawMessage
	if json.Unmarshal([]byte(s), &m) != nil {
		return s
	}
	delete(m, "provenance")
	b, err := json.Marshal(m)
	if err != nil {
		return s
	}
	return string(b)
}
