package cifar

import (
	"fmt"
	"math"
)

// Image is an 8-bit image in channel-major layout, as CIFAR stores it:
// pixel (c, y, x) is Pix[(c·H+y)·W+x]. C is 3 (RGB) or 1 (grey).
type Image struct {
	C, H, W int
	Pix     []byte
}

// NewImage returns a black image.
func NewImage(c, h, w int) Image { return Image{c, h, w, make([]byte, c*h*w)} }

// CIFARImage views one CIFAR image (ImageBytes long) as an Image.
func CIFARImage(pix []byte) Image { return Image{Channels, Side, Side, pix[:ImageBytes:ImageBytes]} }

func (m Image) plane(c int) []byte { return m.Pix[c*m.H*m.W : (c+1)*m.H*m.W] }

// Op is one of the image operations AutoAugment draws from. Each follows
// what torchvision's AutoAugment does to the PIL images of a CIFAR dataset
// (Pillow's arithmetic, rounding and clamping), byte for byte up to the
// last-bit differences noted on the individual ops.
type Op uint8

// The operations, with the meaning of the magnitude passed to Apply (the
// value torchvision's _apply_op receives).
const (
	ShearX       Op = iota // shear x by magnitude·y around the top-left corner
	ShearY                 // shear y by magnitude·x around the top-left corner
	TranslateX             // shift right by int(magnitude) pixels
	TranslateY             // shift down by int(magnitude) pixels
	Rotate                 // rotate by magnitude degrees counter-clockwise about the centre
	Brightness             // blend with black, factor 1+magnitude
	Color                  // blend with the greyscale image, factor 1+magnitude
	Contrast               // blend with the mean grey level, factor 1+magnitude
	Sharpness              // blend with a smoothed image, factor 1+magnitude
	Posterize              // keep the int(magnitude) high bits
	Solarize               // invert pixels ≥ magnitude
	AutoContrast           // stretch each channel to [0, 255]
	Equalize               // equalise each channel's histogram
	Invert                 // 255 − v
	numOps
)

// NumOps is the number of operations: Op values are 0..NumOps−1.
const NumOps = int(numOps)

var opNames = [numOps]string{"ShearX", "ShearY", "TranslateX", "TranslateY", "Rotate", "Brightness", "Color",
	"Contrast", "Sharpness", "Posterize", "Solarize", "AutoContrast", "Equalize", "Invert"}

func (op Op) String() string {
	if op < numOps {
		return opNames[op]
	}
	return fmt.Sprintf("Op(%d)", op)
}

// Apply writes op(src) with the given magnitude to dst. dst and src must
// have the same shape and must not share memory. Geometric ops fill the
// uncovered area with 0 and use nearest-neighbour sampling, as
// torchvision's AutoAugment defaults do.
func (op Op) Apply(dst, src Image, magnitude float64) {
	if dst.C != src.C || dst.H != src.H || dst.W != src.W || len(dst.Pix) != len(src.Pix) || len(src.Pix) != src.C*src.H*src.W || (src.C != 1 && src.C != 3) {
		panic(fmt.Sprintf("cifar: %v of a %d×%d×%d image into a %d×%d×%d one", op, src.C, src.H, src.W, dst.C, dst.H, dst.W))
	}
	switch op {
	case ShearX:
		affine(dst, src, [6]float64{1, magnitude, 0, 0, 1, 0})
	case ShearY:
		affine(dst, src, [6]float64{1, 0, 0, magnitude, 1, 0})
	case TranslateX:
		affine(dst, src, [6]float64{1, 0, -math.Trunc(magnitude), 0, 1, 0})
	case TranslateY:
		affine(dst, src, [6]float64{1, 0, 0, 0, 1, -math.Trunc(magnitude)})
	case Rotate:
		affine(dst, src, rotation(magnitude, src.W, src.H))
	case Brightness:
		f := float32(1 + magnitude)
		var lut [256]byte
		for v := range lut {
			lut[v] = blend(0, byte(v), f)
		}
		applyLUT(dst, src, &lut)
	case Color:
		color(dst, src, float32(1+magnitude))
	case Contrast:
		f := float32(1 + magnitude)
		mean := meanGrey(src)
		var lut [256]byte
		for v := range lut {
			lut[v] = blend(mean, byte(v), f)
		}
		applyLUT(dst, src, &lut)
	case Sharpness:
		sharpness(dst, src, float32(1+magnitude))
	case Posterize:
		mask := byte(0xff) << (8 - min(max(int(magnitude), 0), 8))
		var lut [256]byte
		for v := range lut {
			lut[v] = byte(v) & mask
		}
		applyLUT(dst, src, &lut)
	case Solarize:
		var lut [256]byte
		for v := range lut {
			lut[v] = byte(v)
			if float64(v) >= magnitude {
				lut[v] = 255 - byte(v)
			}
		}
		applyLUT(dst, src, &lut)
	case AutoContrast:
		perChannelLUT(dst, src, autoContrastLUT)
	case Equalize:
		perChannelLUT(dst, src, equalizeLUT)
	case Invert:
		for i, v := range src.Pix {
			dst.Pix[i] = 255 - v
		}
	default:
		panic(fmt.Sprintf("cifar: unknown op %d", op))
	}
}

// affine resamples src into dst by the inverse affine map a: output pixel
// (x, y) takes the input pixel holding the point
// (a0·(x+½) + a1·(y+½) + a2, a3·(x+½) + a4·(y+½) + a5), or 0 outside.
// It follows Pillow's nearest-neighbour affine transform, which works in
// 16.16 fixed point, so even points that land exactly on a pixel boundary
// go the same way as in Pillow.
func affine(dst, src Image, a [6]float64) {
	fix := func(v float64) int64 { return int64(math.Floor(v*65536 + 0.5)) }
	a0, a1, a3, a4 := fix(a[0]), fix(a[1]), fix(a[3]), fix(a[4])
	x0 := fix(a[2] + a[1]*0.5 + a[0]*0.5)
	y0 := fix(a[5] + a[4]*0.5 + a[3]*0.5)
	for c := range src.C {
		in, out := src.plane(c), dst.plane(c)
		xo, yo := x0, y0
		for y := range src.H {
			xx, yy := xo, yo
			row := out[y*src.W : (y+1)*src.W]
			for x := range row {
				xi, yi := xx>>16, yy>>16
				if xi >= 0 && xi < int64(src.W) && yi >= 0 && yi < int64(src.H) {
					row[x] = in[int(yi)*src.W+int(xi)]
				} else {
					row[x] = 0
				}
				xx += a0
				yy += a3
			}
			xo += a1
			yo += a4
		}
	}
}

// rotation is the inverse map Pillow's Image.rotate uses for a
// counter-clockwise rotation by deg degrees about the image centre,
// including its rounding of the matrix to 15 decimals (which makes
// multiples of 90° exact).
func rotation(deg float64, w, h int) [6]float64 {
	deg = math.Mod(deg, 360)
	if deg < 0 {
		deg += 360
	}
	t := -deg * math.Pi / 180
	r15 := func(v float64) float64 { return math.Round(v*1e15) / 1e15 }
	m := [6]float64{r15(math.Cos(t)), r15(math.Sin(t)), 0, r15(-math.Sin(t)), r15(math.Cos(t)), 0}
	cx, cy := float64(w)/2, float64(h)/2
	m[2] = m[0]*-cx + m[1]*-cy + cx
	m[5] = m[3]*-cx + m[4]*-cy + cy
	return m
}

// blend is Pillow's Image.blend of one pixel: in1 + f·(in2 − in1) in single
// precision, truncated and clamped to [0, 255].
func blend(in1, in2 byte, f float32) byte {
	t := float32(in1) + float32(f*float32(int(in2)-int(in1)))
	switch {
	case t <= 0:
		return 0
	case t >= 255:
		return 255
	}
	return byte(t)
}

// grey is Pillow's RGB→L conversion: ITU-R 601-2 luma in 16-bit fixed
// point, rounded.
func grey(r, g, b byte) byte {
	return byte((uint32(r)*19595 + uint32(g)*38470 + uint32(b)*7471 + 0x8000) >> 16)
}

// color blends every pixel with its own grey level (Pillow's
// ImageEnhance.Color); a grey image is its own degenerate.
func color(dst, src Image, f float32) {
	if src.C == 1 {
		copy(dst.Pix, src.Pix)
		return
	}
	n := src.H * src.W
	r, g, b := src.plane(0), src.plane(1), src.plane(2)
	for i := range n {
		l := grey(r[i], g[i], b[i])
		dst.Pix[i] = blend(l, r[i], f)
		dst.Pix[n+i] = blend(l, g[i], f)
		dst.Pix[2*n+i] = blend(l, b[i], f)
	}
}

// meanGrey is the mean grey level of src rounded to an integer, the
// degenerate image of Pillow's ImageEnhance.Contrast.
func meanGrey(src Image) byte {
	n := src.H * src.W
	var sum uint64
	if src.C == 1 {
		for _, v := range src.Pix {
			sum += uint64(v)
		}
	} else {
		r, g, b := src.plane(0), src.plane(1), src.plane(2)
		for i := range n {
			sum += uint64(grey(r[i], g[i], b[i]))
		}
	}
	return byte(float64(sum)/float64(n) + 0.5)
}

// sharpness blends every pixel with Pillow's SMOOTH filter of the image
// (kernel [1 1 1; 1 5 1; 1 1 1]/13, rounded; the border is left as is).
func sharpness(dst, src Image, f float32) {
	w, h := src.W, src.H
	for c := range src.C {
		in, out := src.plane(c), dst.plane(c)
		for y := range h {
			for x := range w {
				i := y*w + x
				if x == 0 || y == 0 || x == w-1 || y == h-1 {
					out[i] = in[i]
					continue
				}
				s := 4 * int(in[i])
				for _, j := range [3]int{i - w, i, i + w} {
					s += int(in[j-1]) + int(in[j]) + int(in[j+1])
				}
				out[i] = blend(byte((s+6)/13), in[i], f)
			}
		}
	}
}

// applyLUT maps every channel through the same table.
func applyLUT(dst, src Image, lut *[256]byte) {
	for c := range src.C {
		mapPlane(dst.plane(c), src.plane(c), lut)
	}
}

func mapPlane(out, in []byte, lut *[256]byte) {
	for i, v := range in {
		out[i] = lut[v]
	}
}

// perChannelLUT maps every channel through a table built from its histogram.
func perChannelLUT(dst, src Image, build func(h *[256]int) [256]byte) {
	for c := range src.C {
		var h [256]int
		for _, v := range src.plane(c) {
			h[v]++
		}
		lut := build(&h)
		mapPlane(dst.plane(c), src.plane(c), &lut)
	}
}

// autoContrastLUT is Pillow's ImageOps.autocontrast with no cutoff: the
// channel's darkest value goes to 0 and its brightest to 255, computed in
// double precision as Pillow does.
func autoContrastLUT(h *[256]int) [256]byte {
	lo, hi := 0, 255
	for lo < 255 && h[lo] == 0 {
		lo++
	}
	for hi > 0 && h[hi] == 0 {
		hi--
	}
	var lut [256]byte
	if hi <= lo {
		for i := range lut {
			lut[i] = byte(i)
		}
		return lut
	}
	scale := 255 / float64(hi-lo)
	offset := -float64(lo) * scale
	for i := range lut {
		lut[i] = byte(min(max(int(float64(float64(i)*scale)+offset), 0), 255))
	}
	return lut
}

// equalizeLUT is Pillow's ImageOps.equalize: a channel with one distinct
// value, or too few pixels for a step, is left unchanged.
func equalizeLUT(h *[256]int) [256]byte {
	var lut [256]byte
	total, last := 0, 0
	for _, n := range h {
		if n != 0 {
			total += n
			last = n
		}
	}
	step := (total - last) / 256
	if step == 0 {
		for i := range lut {
			lut[i] = byte(i)
		}
		return lut
	}
	n := step / 2
	for i := range lut {
		lut[i] = byte(min(n/step, 255))
		n += h[i]
	}
	return lut
}
