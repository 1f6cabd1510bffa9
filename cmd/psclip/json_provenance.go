package main

import (
	"bytes"
	"encoding/json"
	"fmt"
	"io"

	"github.com/psclip/psclip/provenance"
)

// encodeWithProvenance writes res, a value that encodes as a JSON object,
// indented, with rec as its last key "provenance": the result's keys stay
// where they were, so a reader of the earlier output reads this one.
func encodeWithProvenance(w io.Writer, res any, rec provenance.Record) error {
	body, err := json.Marshal(res)
	if err != nil {
		return err
	}
	body = bytes.TrimSpace(body)
	if len(body) < 2 || body[0] != '{' || body[len(body)-1] != '}' {
		return fmt.Errorf("encodeWithProvenance: %T does not encode as a JSON object", res)
	}
	p, err := json.Marshal(rec)
	if err != nil {
		return err
	}
	var all bytes.Buffer
	all.Write(body[:len(body)-1])
	if len(body) > 2 {
		all.WriteByte(',')
	}
	all.WriteString(`"provenance":`)
	all.Write(p)
	all.WriteByte('}')
	var out bytes.Buffer
	if err := json.Indent(&out, all.Bytes(), "", "  "); err != nil {
		return err
	}
	out.WriteByte('\n')
	_, err = w.Write(out.Bytes())
	return err
}
