// Package jsonkeys rewrites the keys of a JSON object, for configurations
// that embed estimator.Spec but keep the JSON keys they had before it: the
// keys are what checkpoints compare on resume and what other tools read.
package jsonkeys

import (
	"bytes"
	"encoding/json"
	"errors"
	"slices"
)

// Rewrite renames the keys of the JSON object b (old name → new name) and
// drops the keys, after renaming, in dropZero whose value is 0, "", false or
// null. The other keys keep their order.
func Rewrite(b []byte, rename map[string]string, dropZero ...string) ([]byte, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	if t, err := dec.Token(); err != nil || t != json.Delim('{') {
		return nil, errors.New("jsonkeys: not a JSON object")
	}
	var out bytes.Buffer
	out.WriteByte('{')
	for dec.More() {
		t, err := dec.Token()
		if err != nil {
			return nil, err
		}
		k := t.(string) // an object's keys are strings
		var v json.RawMessage
		if err := dec.Decode(&v); err != nil {
			return nil, err
		}
		if n, ok := rename[k]; ok {
			k = n
		}
		if slices.Contains(dropZero, k) && zero(v) {
			continue
		}
		if out.Len() > 1 {
			out.WriteByte(',')
		}
		kb, _ := json.Marshal(k)
		out.Write(kb)
		out.WriteByte(':')
		out.Write(v)
	}
	out.WriteByte('}')
	return out.Bytes(), nil
}

// Invert returns the renaming that undoes rename.
func Invert(rename map[string]string) map[string]string {
	inv := make(map[string]string, len(rename))
	for k, v := range rename {
		inv[v] = k
	}
	return inv
}

func zero(v json.RawMessage) bool {
	switch string(v) {
	case "0", `""`, "false", "null":
		return true
	}
	return false
}
