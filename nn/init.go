package nn

import (
	"fmt"
	"math"
	"math/rand/v2"
	"sync"

	"github.com/psclip/psclip/tensor"
)

// An Initializer is a layer that can draw its parameters afresh with its
// initialisation scheme. Init uses it; a layer of one's own with
// parameters implements it to take part (a container, by calling its
// children's Init in order).
type Initializer interface {
	Init(rng *rand.Rand)
}

// Init re-initialises every parameter of l from a PCG generator seeded with
// seed, each layer with its own scheme (PyTorch's defaults for this
// package's layers; see their Init methods), layer by layer in order. It
// walks Sequential and Residual; any other layer with parameters must be an
// Initializer, or Init returns an error naming it before changing anything.
func Init(l Layer, seed uint64) error {
	if err := initCheck(l); err != nil {
		return err
	}
	initFrom(l, rand.New(rand.NewPCG(seed, initStream)))
	return nil
}

// initStream is the PCG stream of Init's generator and of the default
// source ("nn-init").
const initStream = 0x6e6e2d696e6974

func initCheck(l Layer) error {
	switch l := l.(type) {
	case Initializer:
		return nil
	case Sequential:
		for _, c := range l {
			if err := initCheck(c); err != nil {
				return err
			}
		}
		return nil
	case *Residual:
		return initCheck(l.F)
	}
	if len(l.Params()) > 0 {
		return fmt.Errorf("nn: Init: layer %T has parameters but no Init method (nn.Initializer)", l)
	}
	return nil
}

func initFrom(l Layer, rng *rand.Rand) {
	switch l := l.(type) {
	case Initializer:
		l.Init(rng)
	case Sequential:
		for _, c := range l {
			initFrom(c, rng)
		}
	case *Residual:
		initFrom(l.F, rng)
	}
}

// defaultSource is what constructors draw their layer's initial parameters
// from: a PCG generator with seed 0 on Init's stream, shared by every
// constructor of the program and guarded by a lock. A program that builds
// the same layers in the same order therefore starts from the same weights
// on every run; Init chooses the seed instead.
var defaultSource = struct {
	sync.Mutex
	rng *rand.Rand
}{rng: rand.New(rand.NewPCG(0, initStream))}

// initDefault initialises l from the default source.
func initDefault(l Initializer) {
	defaultSource.Lock()
	defer defaultSource.Unlock()
	l.Init(defaultSource.rng)
}

// Init draws PyTorch's default initialisation of nn.Linear (InitDefault).
func (l *Linear) Init(rng *rand.Rand) { InitDefault(rng, l.Weight, l.Bias) }

// Init draws PyTorch's default initialisation of nn.Conv2d (InitDefault).
func (c *Conv2d) Init(rng *rand.Rand) { InitDefault(rng, c.Weight, c.Bias) }

// Init draws PyTorch's default initialisation of nn.Embedding, N(0, 1).
func (e *Embedding) Init(rng *rand.Rand) { Normal(rng, e.Weight.Value, 1) }

// Init draws N(0, 1), PyTorch's nn.Embedding default, which nanoGPT's
// position embedding is.
func (p *PositionEmbedding) Init(rng *rand.Rand) { Normal(rng, p.Weight.Value, 1) }

// Init sets the weight to 1 and the bias to 0, PyTorch's initialisation; it
// draws nothing.
func (l *LayerNorm) Init(*rand.Rand) {
	for i := range l.Weight.Value.Data {
		l.Weight.Value.Data[i] = 1
	}
	if l.Bias != nil {
		l.Bias.Value.Zero()
	}
}

// Init initialises c_attn, then c_proj (Linear.Init).
func (a *CausalSelfAttention) Init(rng *rand.Rand) {
	a.CAttn.Init(rng)
	a.CProj.Init(rng)
}

// FanIn is PyTorch's fan-in of a weight of the given shape: the product of
// all dimensions but the first ([out,in] → in, [cout,cin,kh,kw] → cin·kh·kw).
func FanIn(shape []int) int {
	if len(shape) < 2 {
		panic(fmt.Sprintf("nn: FanIn of shape %v: need at least two dimensions", shape))
	}
	return tensor.Numel(shape[1:])
}

// InitDefault applies PyTorch's default initialisation of nn.Linear and
// nn.Conv2d: kaiming_uniform_(a=√5) for the weight, which is
// U(-1/√fan_in, 1/√fan_in), and the same uniform for the bias (may be nil).
// The weight is drawn before the bias, row-major.
func InitDefault(rng *rand.Rand, weight, bias *Param) {
	bound := 1 / math.Sqrt(float64(FanIn(weight.Value.Shape)))
	Uniform(rng, weight.Value, bound)
	if bias != nil {
		Uniform(rng, bias.Value, bound)
	}
}

// Uniform fills t with independent U(-bound, bound) entries.
func Uniform(rng *rand.Rand, t *tensor.Tensor, bound float64) {
	for i := range t.Data {
		t.Data[i] = float32(bound * (2*rng.Float64() - 1))
	}
}

// Normal fills t with independent N(0, std²) entries.
func Normal(rng *rand.Rand, t *tensor.Tensor, std float64) {
	for i := range t.Data {
		t.Data[i] = float32(std * rng.NormFloat64())
	}
}
