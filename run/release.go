package run

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"sort"
	"strings"

	"github.com/psclip/psclip/privacy"
)

// Privacy is what the run layer must know of a dp-sgd run (Spec.Privacy):
// its secret, and what may make it not private. A run with a Privacy
// writes only what Released declares, in its log, its result, its
// checkpoint's trainer state and its progress lines, unless
// ReleaseUnprotected.
type Privacy struct {
	// Secret keys the run's Poisson samples. With Options.Comm every
	// rank gets rank 0's (privacy.Secret.Share) when the run is set up;
	// no file holds it. A fixed seed's secret makes the run not private.
	Secret *privacy.Secret
	// Shuffled says that the batches are a shuffled epoch's, cut into
	// batches of a fixed size, rather than the Poisson samples that the
	// accounting assumes: the run is then not private.
	Shuffled bool
	// ReleaseUnprotected writes what Released withholds: statistics of the
	// private records that the noised gradient does not cover (training
	// loss and accuracy, per-sample norms, clipped counts, realised batch
	// sizes, validation figures on a split of the training set …). Every
	// record and result that holds one then lists those keys under
	// "unprotected", and the run is not private.
	ReleaseUnprotected bool
}

// The reasons NotPrivateBecause gives.
const (
	BecauseFixedSeed   = "fixed noise and sampling seed"
	BecauseShuffled    = "shuffled batches, not the Poisson samples the accounting assumes"
	BecauseUnprotected = "statistics of the private records released unprotected"
)

// NotPrivateBecause lists why the run's ε does not hold for what it
// writes; none for a private run.
func (p *Privacy) NotPrivateBecause() []string {
	var why []string
	if p.Secret.Fixed() {
		why = append(why, BecauseFixedSeed)
	}
	if p.Shuffled {
		why = append(why, BecauseShuffled)
	}
	if p.ReleaseUnprotected {
		why = append(why, BecauseUnprotected)
	}
	return why
}

// note is the line a dp-sgd run's progress opens with: whether its ε holds
// for what it writes, and if not why.
func (p *Privacy) note() string {
	why := p.NotPrivateBecause()
	if len(why) == 0 {
		return "dp-sgd: private: secret Poisson samples and noise (keys from crypto/rand, written nowhere); the run writes only what ε covers"
	}
	return "dp-sgd: this run is NOT private (" + strings.Join(why, "; ") + "): reproductions and tests only"
}

// Private reports whether the run is private: secret samples and noise,
// Poisson sampling, nothing released beyond what ε covers.
func (p *Privacy) Private() bool { return len(p.NotPrivateBecause()) == 0 }

// PrivacyRecord is the first line of a dp-sgd run's log, and its keys open
// the run's result.json.
type PrivacyRecord struct {
	Private           bool     `json:"private"`
	NotPrivateBecause []string `json:"not_private_because,omitempty"`
}

// Record is p's PrivacyRecord.
func (p *Privacy) Record() PrivacyRecord {
	why := p.NotPrivateBecause()
	return PrivacyRecord{Private: len(why) == 0, NotPrivateBecause: why}
}

// Release is how a released key is written: whole (its value as it is, a
// setting or a record of the machine) or member by member (an object or a
// list of objects whose members are themselves declared).
type Release struct {
	Whole bool
	// Why is what the value is, and why ε covers it or it is public.
	Why string
}

// Released declares what a dp-sgd run may write: the JSON keys of its log
// records, its result and its checkpoint's trainer state, wherever they
// stand, that hold no statistic of the private records outside the noised
// gradient. Everything else is withheld (Privacy.ReleaseUnprotected
// aside), so that a key a trainer adds is withheld until it is declared
// here.
var Released = map[string]Release{
	// What the run is.
	"config":              {true, "the settings (σ, C, δ, q's expected batch, the learning rate, the seeds)"},
	"private":             {true, "whether ε holds for what the run writes"},
	"not_private_because": {true, "why ε does not hold"},
	"unprotected":         {true, "the keys released that ε does not cover"},
	"provenance":          {true, "the command, the binary and the machine"},
	"ranks":               {true, "the processes of a data-parallel run"},
	"clip_threshold":      {true, "the clipping norm C, a setting"},
	"clip_norm":           {true, "adaptive dp-sgd's clipping norm, moved only by noised counts whose privacy ε composes"},
	// RecordFile: whose directory it is.
	"kind":    {true, "the directory's kind"},
	"owner":   {true, "who made the directory"},
	"created": {true, "when the directory was made"},
	"psclip":  {true, "the commit of the psclip that made it"},
	// Progress and time.
	"epoch":         {true, "epochs done"},
	"epochs":        {true, "the epochs of the run"},
	"step":          {true, "steps done"},
	"steps":         {true, "steps done, or the steps of the run"},
	"lr":            {true, "the learning rate of the schedule"},
	"elapsed_s":     {true, "wall time"},
	"epoch_s":       {true, "wall time"},
	"train_time_s":  {true, "wall time"},
	"curve":         {false, "a list of the records here"},
	"pos":           {false, "where the data order stands"},
	"index":         {true, "batches of the epoch drawn (a count, not which images)"},
	"epoch_start":   {true, "wall time"},
	"epoch_acc":     {false, "the epoch's running statistics, of which only these members"},
	"train_seconds": {true, "wall time"},
	// The accounting.
	"epsilon":     {true, "ε, by the accountant, at δ"},
	"accountant":  {true, "the accountant ε is computed by"},
	"delta":       {true, "δ, a setting"},
	"sample_rate": {true, "q = expected batch / N"},
	"records":     {true, "N, the records q is accounted for"},
	"privacy":     {true, "the history of (q, σ) steps ε is accounted from"},
	// The model on public data (the test set).
	"test_acc":  {true, "the model's accuracy on the test set, which is public"},
	"test_loss": {true, "the model's loss on the test set, which is public"},
}

// PublicData names the parts of a run's data (Data.SHA256) that are public:
// a dp-sgd run records the hashes of these only. A hash of private records
// (the training set, a validation split of it, labels, a vocabulary drawn
// from it) would tell whoever holds the checkpoint whether a given dataset
// is the one trained on, which ε does not cover; such a run's resume then
// checks the public parts alone.
var PublicData = map[string]bool{
	"test":       true, // the test set, declared public
	"init":       true, // the pretrained weights fine-tuning starts from
	"corruption": true, // the name of a corruption setting
}

// filter writes what a dp-sgd run may release of one JSON value: with all
// false only the keys Released declares, with all true everything; either
// way it collects the keys Released does not declare in withheld.
type filter struct {
	all      bool
	withheld map[string]bool
}

// release returns b, the JSON of one record, result or state, as p lets
// the run write it, and the undeclared keys it holds (written only with
// ReleaseUnprotected). The order of the members is kept.
func (p *Privacy) release(b []byte) ([]byte, []string, error) {
	f := filter{all: p.ReleaseUnprotected, withheld: map[string]bool{}}
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	var out bytes.Buffer
	if err := f.value(dec, &out); err != nil {
		return nil, nil, err
	}
	keys := make([]string, 0, len(f.withheld))
	for k := range f.withheld {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return out.Bytes(), keys, nil
}

// value copies the next value of dec to out, members of objects that are
// neither declared nor all left out.
func (f *filter) value(dec *json.Decoder, out *bytes.Buffer) error {
	t, err := dec.Token()
	if err != nil {
		return err
	}
	d, ok := t.(json.Delim)
	if !ok {
		b, err := json.Marshal(t) // a json.Number is written as it was read
		out.Write(b)
		return err
	}
	first := true
	sep := func() {
		if !first {
			out.WriteByte(',')
		}
		first = false
	}
	switch d {
	case '[':
		out.WriteByte('[')
		for dec.More() {
			sep()
			if err := f.value(dec, out); err != nil {
				return err
			}
		}
		out.WriteByte(']')
	case '{':
		out.WriteByte('{')
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return err
			}
			key := kt.(string)
			rel, declared := Released[key]
			if !declared {
				f.withheld[key] = true
			}
			if !declared && !f.all {
				var skip json.RawMessage
				if err := dec.Decode(&skip); err != nil {
					return err
				}
				continue
			}
			sep()
			k, _ := json.Marshal(key)
			out.Write(k)
			out.WriteByte(':')
			if rel.Whole {
				var raw json.RawMessage
				if err := dec.Decode(&raw); err != nil {
					return err
				}
				out.Write(raw)
				continue
			}
			if err := f.value(dec, out); err != nil {
				return err
			}
		}
		out.WriteByte('}')
	default:
		return fmt.Errorf("run: unexpected %v in JSON", d)
	}
	_, err = dec.Token() // the closing delimiter
	return err
}

// releaseObject is p.release of the JSON object b, with the privacy keys
// first when head, and the unprotected keys it holds listed under
// "unprotected" (ReleaseUnprotected). Without a Privacy it is b.
func (p *Privacy) releaseObject(b []byte, head bool) ([]byte, error) {
	if p == nil {
		return b, nil
	}
	out, unprotected, err := p.release(b)
	if err != nil {
		return nil, err
	}
	if len(out) < 2 || out[0] != '{' {
		return nil, errors.New("run: a record that is not a JSON object")
	}
	body := out[1 : len(out)-1]
	var w bytes.Buffer
	w.WriteByte('{')
	if head {
		h, err := json.Marshal(p.Record())
		if err != nil {
			return nil, err
		}
		w.Write(h[1 : len(h)-1])
		if len(body) > 0 {
			w.WriteByte(',')
		}
	}
	w.Write(body)
	if len(unprotected) > 0 && p.ReleaseUnprotected {
		u, _ := json.Marshal(unprotected)
		if w.Len() > 1 {
			w.WriteByte(',')
		}
		w.WriteString(`"unprotected":`)
		w.Write(u)
	}
	w.WriteByte('}')
	return w.Bytes(), nil
}

// isEmptyObject reports whether b is "{}": a record of which nothing may
// be released.
func isEmptyObject(b []byte) bool { return bytes.Equal(b, []byte("{}")) }

// Unprotected lists the keys of v's JSON that Released does not declare:
// what a dp-sgd run that releases them (Privacy.ReleaseUnprotected)
// writes beyond ε, for a command to name beside them.
func Unprotected(v any) ([]string, error) {
	b, err := json.Marshal(v)
	if err != nil {
		return nil, err
	}
	_, keys, err := (&Privacy{ReleaseUnprotected: true}).release(b)
	return keys, err
}
