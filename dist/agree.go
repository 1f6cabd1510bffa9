package dist

import (
	"errors"
	"fmt"
	"slices"
)

// AgreeError makes the ranks agree on whether any of them failed: every
// rank passes its own error (nil if it has none) and gets nil if every
// rank passed nil, and otherwise a *RankError carrying the message of the
// lowest failing rank, the same on every rank. It is a collective
// operation. Call it after each piece of work whose errors are a rank's own
// (reading its data, checking its input) and before the next collective
// operation, so that a rank that stops never leaves the others waiting in
// one.
//
// On a communicator of one rank, AgreeError returns err itself.
func AgreeError(c Comm, err error) error {
	if c.Size() == 1 {
		return err
	}
	failed := make([]float64, c.Size())
	if err != nil {
		failed[c.Rank()] = 1
	}
	c.AllReduce(Bufs{F64: [][]float64{failed}})
	first := slices.IndexFunc(failed, func(f float64) bool { return f != 0 })
	if first < 0 {
		return nil
	}
	var msg []byte
	if c.Rank() == first {
		msg = []byte(err.Error())
	}
	msg = BroadcastBytes(c, first, msg)
	n := 0
	for _, f := range failed {
		if f != 0 {
			n++
		}
	}
	return &RankError{Rank: first, Failed: n, Size: c.Size(), Msg: string(msg), Err: err}
}

// RankError is the error AgreeError returns when a rank failed.
type RankError struct {
	// Rank is the lowest rank that failed, Failed how many of the Size
	// ranks did.
	Rank, Failed, Size int
	// Msg is the message of Rank's error.
	Msg string
	// Err is this rank's own error: nil on a rank that did not fail.
	Err error
}

// Error is Msg, prefixed with the failing rank unless every rank failed.
// It is the same on every rank.
func (e *RankError) Error() string {
	if e.Failed == e.Size {
		return e.Msg
	}
	return fmt.Sprintf("rank %d: %s", e.Rank, e.Msg)
}

// Unwrap returns this rank's own error, so that errors.As finds its type on
// the ranks that failed.
func (e *RankError) Unwrap() error { return e.Err }

// AgreeExit makes the ranks of a failed program end alike. Every rank
// passes the error it ends with, the one line it would print for it and
// its exit status, each chosen from the error's type on that rank, which
// differs between the rank that failed (its own error inside the
// *RankError) and the others (none). Where err is a *RankError every rank
// holds one naming the same failing rank, and every rank gets that rank's
// line and status, so that all print the same line and exit with the same
// status. Any other error is one that every rank met alike (input they all
// checked): AgreeExit then returns line and code as they are, without
// communicating. It is a collective operation for a *RankError.
func AgreeExit(c Comm, err error, line string, code int) (string, int) {
	var re *RankError
	if c.Size() == 1 || !errors.As(err, &re) {
		return line, code
	}
	n := []float64{float64(code)}
	c.Broadcast(re.Rank, Bufs{F64: [][]float64{n}})
	return string(BroadcastBytes(c, re.Rank, []byte(line))), int(n[0])
}

// BroadcastBytes returns root's b on every rank; the other ranks' b is
// ignored, so its length need not be known beforehand. It is a collective
// operation.
func BroadcastBytes(c Comm, root int, b []byte) []byte {
	if c.Size() == 1 {
		return b
	}
	n := []float64{float64(len(b))}
	c.Broadcast(root, Bufs{F64: [][]float64{n}})
	if c.Rank() != root {
		b = make([]byte, int(n[0]))
	}
	c.Broadcast(root, Bufs{Bytes: [][]byte{b}})
	return b
}

// Same checks that every rank holds the same b (a data file's identity, a
// configuration): every rank gets nil, or the same *RankError naming the
// lowest rank whose b differs from rank 0's, with what's description. It is
// a collective operation.
func Same(c Comm, what string, b []byte) error {
	var err error
	if root := BroadcastBytes(c, 0, b); !slices.Equal(root, b) {
		err = &DifferError{What: what}
	}
	return AgreeError(c, err)
}

// DifferError is a rank's own error in Same: its What differs from rank 0's.
type DifferError struct{ What string }

func (e *DifferError) Error() string { return e.What + " differs from rank 0's" }
