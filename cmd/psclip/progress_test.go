package main

import (
	"path/filepath"
	"strings"
	"testing"
	"time"
)

// journal records the writes to stdout and stderr in order, each tagged
// with its stream.
type journal struct{ writes []string }

type stream struct {
	j   *journal
	tag string
}

func (s stream) Write(p []byte) (int, error) {
	s.j.writes = append(s.j.writes, s.tag+string(p))
	return len(p), nil
}

// Issue 26: sample and eval gpt are not silent on long work: sample
// streams its text token by token, with progress lines on stderr (stdout
// is no terminal here), and eval gpt prints each estimate's row as soon as
// it is made, with progress lines on stderr while one runs.
func TestSampleAndEvalStream(t *testing.T) {
	corpus := writeCorpus(t, strings.Repeat("to be or not to be, that is the question.\n", 60))
	out := filepath.Join(t.TempDir(), "run")
	if code, _, stderr := runCLI(append([]string{"train", "gpt", "--text", corpus, "--out", out}, tinyGPTFlags...)...); code != 0 {
		t.Fatalf("train gpt: exit %d: %s", code, stderr)
	}
	defer func(d time.Duration) { progressEvery = d }(progressEvery)
	progressEvery = 0 // a line after every token and batch
	for _, c := range []struct {
		args []string
		want []string // writes that must come in this order, among others
	}{
		{[]string{"sample", "--ckpt", out, "--tokens", "12", "--prompt", "to"},
			[]string{"out:to", "err:sample: 1/12 tokens\n", "out:", "err:sample: 2/12 tokens\n", "out:", "err:sample: 12/12 tokens\n"}},
		{[]string{"eval", "gpt", "--ckpt", out, "--text", corpus, "--eval-iters", "3", "--seeds", "1,2", "--splits", "val"},
			[]string{"err:eval gpt: val, seed 1: 1/3 batches\n", "err:eval gpt: val, seed 1: 3/3 batches\n", "out:val    1 ",
				"err:eval gpt: val, seed 2: 1/3 batches\n", "out:val    2 ", "out:val    mean ± sd"}},
	} {
		j := &journal{}
		if code := run(c.args, stream{j, "out:"}, stream{j, "err:"}); code != 0 {
			t.Fatalf("%s: exit %d: %q", strings.Join(c.args, " "), code, j.writes)
		}
		next := 0
		for _, w := range j.writes {
			if next < len(c.want) && strings.HasPrefix(w, c.want[next]) {
				next++
			}
		}
		if next < len(c.want) {
			t.Errorf("%s: writes %q; want, in order, writes starting %q (missing %q)", strings.Join(c.args[:2], " "), j.writes, c.want, c.want[next])
		}
	}

}
