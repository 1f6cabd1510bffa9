package estimator

import (
	"encoding"
	"errors"
)

// State returns the state of an adaptive estimator (one that implements
// encoding.BinaryMarshaler) for a checkpoint, and nil for a stateless one.
func State(e Estimator) ([]byte, error) {
	if m, ok := e.(encoding.BinaryMarshaler); ok {
		return m.MarshalBinary()
	}
	return nil, nil
}

// SetState restores what State returned. An adaptive estimator refuses a
// missing state, so a resumed run cannot silently start its threshold afresh;
// a stateless one refuses a state (an adaptive estimator's, whose threshold
// it would throw away) with a *MismatchError.
func SetState(e Estimator, b []byte) error {
	u, ok := e.(encoding.BinaryUnmarshaler)
	if !ok {
		if b != nil {
			return &MismatchError{Saved: "an adaptive estimator", Have: Describe(e)}
		}
		return nil
	}
	if b == nil {
		return errors.New("no state of the adaptive estimator " + e.Name())
	}
	return u.UnmarshalBinary(b)
}
