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
// token directory.
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
		})
	}
}
