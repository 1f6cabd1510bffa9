package gpt

import (
	"bufio"
	"crypto/sha256"
	"encoding/binary"
	"encoding/hex"
	"encoding/json"
	"os"
	"path/filepath"
	"testing"

	"github.com/psclip/psclip/run"
)

// cleanDigest trains cfg into a fresh directory and returns the SHA-256 of
// its checkpoint's tensor bytes (weights, AdamW moments: the safetensors
// data after the header, which holds wall times) and of its log with the
// timing fields dropped.
func cleanDigest(t *testing.T, cfg Config) string {
	t.Helper()
	dir := t.TempDir()
	if _, err := trainRun(t, cfg, testCorpus(t), RunOptions{Out: dir}); err != nil {
		t.Fatal(err)
	}
	h := sha256.New()
	b, err := os.ReadFile(filepath.Join(dir, run.CheckpointFile))
	if err != nil {
		t.Fatal(err)
	}
	n := binary.LittleEndian.Uint64(b)
	h.Write(b[8+n:])
	f, err := os.Open(filepath.Join(dir, run.LogFile))
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	sc := bufio.NewScanner(f)
	sc.Buffer(nil, 1<<24)
	for sc.Scan() {
		var m map[string]json.RawMessage
		if err := json.Unmarshal(sc.Bytes(), &m); err != nil {
			t.Fatal(err)
		}
		delete(m, "elapsed_s")
		delete(m, "tokens_per_s")
		line, _ := json.Marshal(m)
		h.Write(append(line, '\n'))
	}
	return hex.EncodeToString(h.Sum(nil))
}

func TestPrintGolden(t *testing.T) {
	for _, m := range ClipModes {
		t.Logf("%s %s", m, cleanDigest(t, tinyConfig(m)))
	}
}
