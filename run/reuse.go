package run

import (
	"encoding/json"
	"errors"
	"fmt"
	"io/fs"
	"path/filepath"

	"github.com/psclip/psclip/checkpoint"
	"github.com/psclip/psclip/internal/regfile"
)

// Reuse is how an experiment trains one of its runs: with o.Resume, a run
// in o.Out that finished with config on data is read back (its ResultFile,
// which must hold the "config" and "data" of the run, as a trainer's
// summary does) rather than trained again; a finished run of another
// configuration is a *ConfigChangedError, one of other data a
// *DataChangedError. A run that is not finished is trained with train:
// resumed from its checkpoint, or, when it stopped before its first one,
// started over, since it has nothing to keep.
func Reuse[R any](o Options, config any, data Data, train func(Options) (*R, error)) (*R, error) {
	if !o.Resume {
		return train(o)
	}
	path := filepath.Join(o.Out, ResultFile)
	b, err := regfile.ReadFile(path)
	switch {
	case err == nil:
		return finished[R](o.Out, b, config, data)
	case !errors.Is(err, fs.ErrNotExist):
		return nil, err
	}
	if len(present(o.Out, []string{CheckpointFile, checkpoint.PrevPath(CheckpointFile)})) == 0 {
		o.Resume, o.Restart = false, true
	}
	return train(o)
}

// finished decodes the result b of the finished run in dir, after checking
// that it was made with config on data.
func finished[R any](dir string, b []byte, config any, data Data) (*R, error) {
	var head struct {
		Config map[string]json.RawMessage `json:"config"`
		Data   *Data                      `json:"data"`
	}
	if err := json.Unmarshal(b, &head); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultFile), err)
	}
	if head.Data == nil {
		return nil, &NotResumableError{dir, "its result was written by an older psclip and records no data, so it could not be checked"}
	}
	was := checkpoint.Meta{Config: map[string]string{}}
	for k, v := range head.Config {
		was.Config[k] = string(v)
	}
	var ce *checkpoint.ConfigError
	if err := was.CheckConfig(ConfigMap(config)); errors.As(err, &ce) {
		return nil, &ConfigChangedError{Dir: dir, Changes: ce.Diffs}
	}
	if diffs := data.Diff(*head.Data); diffs != nil {
		return nil, &DataChangedError{Dir: dir, Was: head.Data.Source, Now: data.Source, Changes: diffs}
	}
	r := new(R)
	if err := json.Unmarshal(b, r); err != nil {
		return nil, fmt.Errorf("%s: %w", filepath.Join(dir, ResultFile), err)
	}
	return r, nil
}
