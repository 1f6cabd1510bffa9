package main

import (
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/psclip/psclip/data/bpe"
)

// gpt2Dir returns the directory of GPT-2's tokenizer files, skipping the
// test without them (data/bpe/fetch.sh fetches them), or failing it under
// CI=true.
func gpt2Dir(t *testing.T) string {
	t.Helper()
	dir, err := bpe.DefaultDir()
	if err == nil {
		_, err = bpe.Load(dir)
	}
	if err != nil {
		if os.Getenv("CI") == "true" {
			t.Fatalf("GPT-2's tokenizer files are needed under CI=true (run data/bpe/fetch.sh): %v", err)
		}
		t.Skipf("GPT-2's tokenizer files are absent (run data/bpe/fetch.sh): %v", err)
	}
	return dir
}

// Text tokenised with GPT-2's BPE, or by characters, trains a GPT from the
// token directory, which psclip sample decodes with the tokenizer the
// tokens were made with (and refuses another).
func TestDataTokenizeTrainsGPT(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("To be, or not to be, that is the question: whether 'tis nobler in the mind to suffer.\n", 40))
	for _, tok := range []string{"gpt2", "char"} {
		t.Run(tok, func(t *testing.T) {
			args := []string{"data", "tokenize", "--text", corpus, "--tokenizer", tok}
			if tok == "gpt2" {
				args = append(args, "--vocab-dir", gpt2Dir(t))
			}
			data := filepath.Join(t.TempDir(), "data")
			code, stdout, stderr := runCLI(append(args, "--out", data)...)
			if code != 0 || !strings.Contains(stdout, "train.bin") {
				t.Fatalf("data tokenize: exit %d, %q, %q", code, stdout, stderr)
			}
			_, err := os.Stat(filepath.Join(data, "vocab.txt"))
			if hasVocab := err == nil; hasVocab != (tok == "char") {
				t.Errorf("vocab.txt written: %v, want %v", hasVocab, tok == "char")
			}
			out := filepath.Join(t.TempDir(), "run")
			code, stdout, stderr = runCLI(append([]string{"train", "gpt", "--data", data, "--out", out}, tinyGPTFlags...)...)
			if code != 0 || !strings.Contains(stdout, "final validation loss") {
				t.Fatalf("train gpt --data: exit %d, %q, %q", code, stdout, stderr)
			}
			// psclip sample decodes with the run's tokenizer.
			sample := []string{"sample", "--ckpt", out, "--tokens", "20", "--prompt", "To be, or"}
			if tok == "gpt2" {
				sample = append(sample, "--vocab-dir", gpt2Dir(t))
			}
			code, stdout, stderr = runCLI(sample...)
			if code != 0 || !strings.HasPrefix(stdout, "To be, or") || len(stdout) <= len("To be, or") {
				t.Fatalf("sample: exit %d, %q, %q", code, stdout, stderr)
			}
			if tok == "gpt2" {
				// The tokens were made by this tokenizer, not another.
				other := t.TempDir()
				for _, f := range []string{"encoder.json", "vocab.bpe"} {
					b, err := os.ReadFile(filepath.Join(gpt2Dir(t), f))
					if err != nil {
						t.Fatal(err)
					}
					if f == "vocab.bpe" { // one merge less
						b = b[:strings.LastIndexByte(strings.TrimSuffix(string(b), "\n"), '\n')+1]
					}
					if err := os.WriteFile(filepath.Join(other, f), b, 0o644); err != nil {
						t.Fatal(err)
					}
				}
				code, _, stderr := runCLI("sample", "--ckpt", out, "--tokens", "5", "--vocab-dir", other)
				if code != 2 || !strings.Contains(stderr, "not the one") {
					t.Errorf("sample with another tokenizer: exit %d, %q", code, stderr)
				}
			}
		})
	}
}
