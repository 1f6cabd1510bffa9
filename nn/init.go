package nn

import (
	"fmt"
	"math"
	"math/rand/v2"

	"github.com/psclip/psclip/tensor"
)

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
