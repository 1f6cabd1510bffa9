package run

import (
	"encoding/json"
	"fmt"
)

// ConfigMap is a configuration as a checkpoint stores it
// (checkpoint.Meta.Config): every setting's JSON value under its JSON name.
// c must marshal to a JSON object, as a trainer's Config struct does.
func ConfigMap(c any) map[string]string {
	b, err := json.Marshal(c)
	if err != nil {
		panic(fmt.Sprintf("run: configuration %T does not marshal: %v", c, err)) // a programming error
	}
	var raw map[string]json.RawMessage
	if err := json.Unmarshal(b, &raw); err != nil {
		panic(fmt.Sprintf("run: configuration %T is not a JSON object: %v", c, err))
	}
	m := make(map[string]string, len(raw))
	for k, v := range raw {
		m[k] = string(v)
	}
	return m
}

// DecodeConfig inverts ConfigMap: it sets the configuration v points to
// from m.
func DecodeConfig(m map[string]string, v any) error {
	raw := make(map[string]json.RawMessage, len(m))
	for k, v := range m {
		raw[k] = json.RawMessage(v)
	}
	b, err := json.Marshal(raw)
	if err == nil {
		err = json.Unmarshal(b, v)
	}
	if err != nil {
		return fmt.Errorf("checkpoint configuration: %w", err)
	}
	return nil
}
