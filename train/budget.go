package train

import (
	"math"
	"strconv"
	"strings"

	"github.com/psclip/psclip/nn"
	"github.com/psclip/psclip/setting"
)

// MemoryBudget is a per-sample memory budget as a user states it
// (ParseMemoryBudget): automatic, none, a number of bytes, or a ratio of
// the per-sample step's memory to the plain step's. Config.PerSampleMemory
// takes the bytes it comes to (Bytes). The zero value is automatic.
type MemoryBudget struct {
	// Size is the budget in bytes when Ratio is 0: 0 automatic (each
	// layer's own rule), nn.NoMaterialise none.
	Size int64
	// Ratio, when not 0, bounds the per-sample step's memory to Ratio
	// times the plain step's: the budget is (Ratio − 1) times the plain
	// step's memory. It is at least 1.
	Ratio float64
}

// Bytes returns the budget in bytes for Config.PerSampleMemory, given the
// plain step's memory in bytes (a model's TrainingBytes, say: a lower
// bound, so that a ratio errs on the side of less).
func (m MemoryBudget) Bytes(plain float64) int64 {
	if m.Ratio == 0 {
		return m.Size
	}
	b := math.Floor((m.Ratio - 1) * plain)
	switch {
	case b < 1:
		return nn.NoMaterialise
	case b >= math.MaxInt64:
		return math.MaxInt64
	}
	return int64(b)
}

// String returns the budget as ParseMemoryBudget reads it, a size in the
// largest binary unit that divides it.
func (m MemoryBudget) String() string {
	switch {
	case m.Ratio != 0:
		return strconv.FormatFloat(m.Ratio, 'g', -1, 64) + "x"
	case m.Size == 0:
		return "auto"
	case m.Size == nn.NoMaterialise:
		return "none"
	}
	for _, u := range []struct {
		suffix string
		scale  int64
	}{{"TiB", 1 << 40}, {"GiB", 1 << 30}, {"MiB", 1 << 20}, {"KiB", 1 << 10}} {
		if m.Size%u.scale == 0 {
			return strconv.FormatInt(m.Size/u.scale, 10) + u.suffix
		}
	}
	return strconv.FormatInt(m.Size, 10)
}

// units are the byte units ParseMemoryBudget reads, decimal and binary.
var units = []struct {
	suffix string
	scale  float64
}{
	{"KiB", 1 << 10}, {"MiB", 1 << 20}, {"GiB", 1 << 30}, {"TiB", 1 << 40},
	{"kB", 1e3}, {"KB", 1e3}, {"MB", 1e6}, {"GB", 1e9}, {"TB", 1e12}, {"B", 1},
}

// ParseMemoryBudget reads a per-sample memory budget: "auto" (each layer's
// own rule), "none" or "0" (no per-sample gradient materialised), a size
// such as "512MiB", "1.5GB" or "300000000" (a whole number of bytes: "1.35"
// is refused, not read as 1 byte), or a ratio to the
// plain step's memory such as "1.35x". Anything else is a *setting.Error
// for the field PerSampleMemory.
func ParseMemoryBudget(s string) (MemoryBudget, error) {
	bad := func() (MemoryBudget, error) {
		return MemoryBudget{}, setting.Errorf("PerSampleMemory", strconv.Quote(s), "auto, none, a size such as 512MiB or 2GB, or a ratio to the plain step's memory such as 1.35x")
	}
	switch s {
	case "auto":
		return MemoryBudget{}, nil
	case "none", "0":
		return MemoryBudget{Size: nn.NoMaterialise}, nil
	}
	if r, ok := strings.CutSuffix(s, "x"); ok {
		v, err := strconv.ParseFloat(r, 64)
		if err != nil || !(v >= 1) || math.IsInf(v, 1) {
			return bad()
		}
		return MemoryBudget{Ratio: v}, nil
	}
	num, scale, unit := s, 1.0, false
	for _, u := range units {
		if r, ok := strings.CutSuffix(s, u.suffix); ok {
			num, scale, unit = r, u.scale, true
			break
		}
	}
	v, err := strconv.ParseFloat(num, 64)
	b := math.Floor(v * scale)
	if err != nil || !(b >= 0) || b >= math.MaxInt64 {
		return bad()
	}
	if !unit && b != v { // "1.35": a ratio without its x, not 1 byte
		return MemoryBudget{}, setting.Errorf("PerSampleMemory", strconv.Quote(s), "a whole number of bytes, a size with its unit (512MiB) or a ratio with its x (%sx)", s)
	}
	if b == 0 {
		return MemoryBudget{Size: nn.NoMaterialise}, nil
	}
	return MemoryBudget{Size: int64(b)}, nil
}
