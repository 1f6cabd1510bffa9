package run

import (
	"bytes"
	"crypto/sha256"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"hash"
	"io/fs"
	"os"
	"path/filepath"

	"github.com/psclip/psclip/internal/atomicfile"
	"github.com/psclip/psclip/internal/regfile"
)

// logFile is a run's JSON-lines log open for appending. It counts its
// lines and keeps a running SHA-256 of its content, which a checkpoint
// records, so that a resume can tell whether the log on disk is the one the
// checkpoint was written with.
type logFile struct {
	f     *os.File
	lines int
	sum   hash.Hash
}

// logPos is where a log stood when a checkpoint was written.
type logPos struct {
	Lines  int    `json:"log_lines"`
	SHA256 string `json:"log_sha256"`
}

func (l *logFile) pos() logPos {
	return logPos{l.lines, hex.EncodeToString(l.sum.Sum(nil))}
}

// createLog replaces the log at path with kept (the lines of earlier
// sessions, complete) and opens it for appending.
func createLog(path string, kept []byte) (*logFile, error) {
	if err := atomicfile.WriteFile(path, kept); err != nil {
		return nil, err
	}
	f, err := os.OpenFile(path, os.O_WRONLY|os.O_APPEND, 0)
	if err != nil {
		return nil, err
	}
	l := &logFile{f: f, lines: bytes.Count(kept, []byte{'\n'}), sum: sha256.New()}
	l.sum.Write(kept)
	return l, nil
}

// write appends rec as one JSON line (rec's JSON, or rec itself if it is
// a []byte of JSON). A line may be of any length.
func (l *logFile) write(rec any) error {
	b, ok := rec.([]byte)
	if !ok {
		var err error
		if b, err = json.Marshal(rec); err != nil {
			return err
		}
	}
	b = append(b, '\n')
	if _, err := l.f.Write(b); err != nil {
		return err
	}
	l.sum.Write(b)
	l.lines++
	return nil
}

// sync makes the log durable before a checkpoint refers to it.
func (l *logFile) sync() error { return l.f.Sync() }

func (l *logFile) close() error { return l.f.Close() }

// keptLog returns the first p.Lines lines of the log in dir, which must be
// those a checkpoint recorded (the lines written after it, and a last line
// cut by a crash, are dropped), and the lines one by one. Log lines have no
// length limit.
func keptLog(dir string, p logPos) ([]byte, [][]byte, error) {
	path := filepath.Join(dir, LogFile)
	b, err := regfile.ReadFile(path)
	if errors.Is(err, fs.ErrNotExist) {
		return nil, nil, &NotResumableError{dir, LogFile + " is missing"}
	}
	if err != nil {
		return nil, nil, err
	}
	var lines [][]byte
	end := 0
	for len(lines) < p.Lines {
		i := bytes.IndexByte(b[end:], '\n')
		if i < 0 {
			return nil, nil, &NotResumableError{dir, fmt.Sprintf("%s has %d complete lines, the checkpoint was written after %d", LogFile, len(lines), p.Lines)}
		}
		lines = append(lines, b[end:end+i])
		end += i + 1
	}
	kept := b[:end]
	if sum := sha256.Sum256(kept); hex.EncodeToString(sum[:]) != p.SHA256 {
		return nil, nil, &NotResumableError{dir, fmt.Sprintf("the first %d lines of %s are not those the checkpoint was written with (the log was changed, or belongs to another run)", p.Lines, LogFile)}
	}
	return kept, lines, nil
}
