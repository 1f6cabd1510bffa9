package run

import (
	"encoding/json"
	"fmt"
)

// EpochRecords decodes the epoch records among kept, the log lines of a
// resumed run's earlier sessions (Trainer.Begin's), into T: every line but
// the per-sample norm lines (Options.LogNorms), which carry a "step".
func EpochRecords[T any](kept [][]byte) ([]T, error) {
	var recs []T
	for _, line := range kept {
		var probe struct {
			Step *int `json:"step"` // only in a norms line
		}
		if err := json.Unmarshal(line, &probe); err != nil {
			return nil, fmt.Errorf("%s: %w", LogFile, err)
		}
		if probe.Step != nil {
			continue
		}
		var rec T
		if err := json.Unmarshal(line, &rec); err != nil {
			return nil, fmt.Errorf("%s: %w", LogFile, err)
		}
		recs = append(recs, rec)
	}
	return recs, nil
}
