package run

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"maps"
	"slices"
)

// Data is the identity of the data a run trains on, recorded in its
// checkpoint and result so that a resume, or an experiment reusing a
// finished run, can refuse other data.
type Data struct {
	// Source says where the data came from (a directory, a file, the Go
	// source); it names the data in messages and is not compared: the same
	// data moved elsewhere is the same data.
	Source string `json:"source"`
	// SHA256 holds the content hash of each part of the data by name, such
	// as "train" and "test" or "train", "val" and "vocab".
	SHA256 map[string]string `json:"sha256"`
	// GoVersion is the Go release whose source is the corpus, for the
	// default Go-source corpus; empty otherwise.
	GoVersion string `json:"go_version,omitempty"`
}

// Hash is the hex SHA-256 of the concatenation of parts, for Data.SHA256.
func Hash(parts ...[]byte) string {
	h := sha256.New()
	for _, p := range parts {
		h.Write(p)
	}
	return hex.EncodeToString(h.Sum(nil))
}

// released is d with only the hashes of PublicData's parts.
func (d Data) released() Data {
	r := d
	r.SHA256 = map[string]string{}
	for k, v := range d.SHA256 {
		if PublicData[k] {
			r.SHA256[k] = v
		}
	}
	return r
}

// Diff lists how d differs from was, the data a run was trained on: one
// entry per part that changed, naming it; nil if they are the same data.
func (d Data) Diff(was Data) []string {
	all := maps.Clone(was.SHA256)
	if all == nil {
		all = map[string]string{}
	}
	maps.Copy(all, d.SHA256)
	var diffs []string
	for _, k := range slices.Sorted(maps.Keys(all)) {
		if a, b := was.SHA256[k], d.SHA256[k]; a != b {
			diffs = append(diffs, fmt.Sprintf("%s: sha256 %s in the run, %s now", k, short(a), short(b)))
		}
	}
	if d.GoVersion != was.GoVersion {
		diffs = append(diffs, fmt.Sprintf("Go version: %s in the run, %s now", short(was.GoVersion), short(d.GoVersion)))
	}
	return diffs
}

// short abbreviates a hash for a message.
func short(s string) string {
	switch {
	case s == "":
		return "none"
	case len(s) > 12:
		return s[:12] + "…"
	}
	return s
}
