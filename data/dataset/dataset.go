// Package dataset is indexable training data for the library and the
// samplers that draw batches from it.
//
// A Dataset has Len records and returns the batch of any of them by
// index (train.Batch, the input and targets train.Trainer.Step reads).
// Tensors is one held in memory: the user's own tensors. A Sampler draws
// each step's indices: Shuffle in epochs of a seeded permutation,
// Poisson with each record joining each sample independently, as DP-SGD's
// accounting assumes (secret unless a seed is given), Uniform with
// replacement (nanoGPT's random windows). Each saves its position as its
// state (encoding.BinaryMarshaler), so that a sampler given to
// train.Config.Progress is saved and restored by checkpoint.SaveTrainer
// and RestoreTrainer and a resumed run draws what the uninterrupted one
// would; Seek puts Shuffle and Poisson at a step a trainer counts. psclip's
// own trainers draw through them: the image iterator (data/cifar), the
// text samplers (data/text) and the table trainer (experiments/table).
//
//	data, _ := dataset.NewTensors(x, y) // x [N, features…], y one class a record
//	s, _ := dataset.NewShuffle(data.Len(), 64, false, 1)
//	for range steps {
//		b, _ := data.Batch(s.Next())
//		tr.Step(b)
//	}
package dataset

import (
	"encoding"
	"fmt"

	"github.com/psclip/psclip/setting"
	"github.com/psclip/psclip/tensor"
	"github.com/psclip/psclip/train"
)

// Dataset is indexable data: Len records, numbered 0 to Len − 1.
type Dataset interface {
	Len() int
	// Batch returns records idx, in that order, as one batch of
	// len(idx) ≥ 1 samples; an index outside [0, Len()) is an error.
	Batch(idx []int) (train.Batch, error)
}

// Sampler draws the records of each step: Next returns the next step's
// indices (in the Sampler's memory, valid until the next call). Its state
// is its position, for checkpoints.
type Sampler interface {
	Next() []int
	encoding.BinaryMarshaler
	encoding.BinaryUnmarshaler
}

// Tensors is a Dataset held in memory: inputs X of shape [N, …] (record i
// is X's i-th slice along the first dimension) and either class targets Y
// (train.Loss's) or float targets T (train.FloatLoss's), the same number
// for every record (one a record, or one a position of a sequence).
type Tensors struct {
	x    *tensor.Tensor
	y    []int32
	t    []float32
	per  int // input values per record
	perY int // targets per record, Y's or T's
}

// NewTensors returns the Dataset of inputs x and class targets y, which
// it keeps without copying. It refuses, with a *setting.Error naming "X"
// or "Y", inputs with no record or whose data do not fit their shape, and
// targets that do not divide evenly among the records (or none).
func NewTensors(x *tensor.Tensor, y []int32) (*Tensors, error) {
	if y == nil {
		y = []int32{}
	}
	return newTensors(x, y, nil)
}

// NewFloatTensors is NewTensors for float targets t (train.FloatLoss's;
// errors name "X" or "T").
func NewFloatTensors(x *tensor.Tensor, t []float32) (*Tensors, error) {
	if t == nil {
		t = []float32{}
	}
	return newTensors(x, nil, t)
}

// newTensors is NewTensors and NewFloatTensors: exactly one of y and t
// is not nil.
func newTensors(x *tensor.Tensor, y []int32, t []float32) (*Tensors, error) {
	if x == nil || len(x.Shape) == 0 || x.Shape[0] < 1 || tensor.Numel(x.Shape) != len(x.Data) {
		var shape []int
		if x != nil {
			shape = x.Shape
		}
		return nil, setting.Errorf("X", shape, "inputs of at least one record whose data fit their shape")
	}
	n := x.Shape[0]
	d := &Tensors{x: x, y: y, t: t, per: len(x.Data) / n}
	switch {
	case len(y)%n != 0 || y != nil && len(y) == 0:
		return nil, setting.Errorf("Y", len(y), "a positive multiple of the %d records", n)
	case len(t)%n != 0 || t != nil && len(t) == 0:
		return nil, setting.Errorf("T", len(t), "a positive multiple of the %d records", n)
	}
	d.perY = (len(y) + len(t)) / n
	return d, nil
}

// Len is the number of records.
func (d *Tensors) Len() int { return d.x.Shape[0] }

// Batch copies records idx into a new batch.
func (d *Tensors) Batch(idx []int) (train.Batch, error) {
	if len(idx) == 0 {
		return train.Batch{}, setting.Errorf("idx", 0, "at least one record")
	}
	shape := append([]int{len(idx)}, d.x.Shape[1:]...)
	b := train.Batch{X: tensor.New(shape...)}
	if d.y != nil {
		b.Y = make([]int32, 0, len(idx)*d.perY)
	} else {
		b.T = make([]float32, 0, len(idx)*d.perY)
	}
	for j, i := range idx {
		if i < 0 || i >= d.Len() {
			return train.Batch{}, fmt.Errorf("dataset: record %d of %d records", i, d.Len())
		}
		copy(b.X.Data[j*d.per:(j+1)*d.per], d.x.Data[i*d.per:])
		if d.y != nil {
			b.Y = append(b.Y, d.y[i*d.perY:(i+1)*d.perY]...)
		} else {
			b.T = append(b.T, d.t[i*d.perY:(i+1)*d.perY]...)
		}
	}
	return b, nil
}
