package cifar

import (
	"bytes"
	"fmt"
	"math"
	"math/rand/v2"
	"testing"
)

func randomImage(c, h, w int, seed uint64) Image {
	r := rand.New(rand.NewPCG(seed, 1))
	m := NewImage(c, h, w)
	for i := range m.Pix {
		m.Pix[i] = byte(r.Uint32())
	}
	return m
}

// marker returns a black c×h×w image with value v at (x, y) in every channel.
func marker(c, h, w, x, y int, v byte) Image {
	m := NewImage(c, h, w)
	for ch := range c {
		m.Pix[(ch*h+y)*w+x] = v
	}
	return m
}

func apply(op Op, src Image, mag float64) Image {
	dst := NewImage(src.C, src.H, src.W)
	op.Apply(dst, src, mag)
	return dst
}

// grid builds a 1×h×w image from rows.
func grid(rows ...[]byte) Image {
	m := Image{C: 1, H: len(rows), W: len(rows[0])}
	for _, r := range rows {
		m.Pix = append(m.Pix, r...)
	}
	return m
}

func TestOpsIdentityAtNeutralMagnitude(t *testing.T) {
	for _, src := range []Image{randomImage(3, 5, 7, 1), randomImage(1, 6, 4, 2), randomImage(3, Side, Side, 3)} {
		for _, tc := range []struct {
			op  Op
			mag float64
		}{
			{ShearX, 0}, {ShearY, 0}, {TranslateX, 0}, {TranslateX, 0.9}, {TranslateY, -0.9},
			{Rotate, 0}, {Rotate, 360}, {Brightness, 0}, {Color, 0}, {Contrast, 0}, {Sharpness, 0},
			{Posterize, 8}, {Solarize, 256},
		} {
			if got := apply(tc.op, src, tc.mag); !bytes.Equal(got.Pix, src.Pix) {
				t.Errorf("%v(%v) of a %d×%d×%d image changed it", tc.op, tc.mag, src.C, src.H, src.W)
			}
		}
	}
}

func TestPointOps(t *testing.T) {
	src := grid([]byte{0, 1, 37, 100, 127, 128, 200, 255})
	for _, tc := range []struct {
		op   Op
		mag  float64
		want []byte
	}{
		{Invert, 0, []byte{255, 254, 218, 155, 128, 127, 55, 0}},
		{Solarize, 128, []byte{0, 1, 37, 100, 127, 127, 55, 0}},
		{Solarize, 0, []byte{255, 254, 218, 155, 128, 127, 55, 0}},
		{Solarize, 226.66, []byte{0, 1, 37, 100, 127, 128, 200, 0}},
		{Posterize, 4, []byte{0, 0, 32, 96, 112, 128, 192, 240}},
		{Posterize, 1, []byte{0, 0, 0, 0, 0, 128, 128, 128}},
		// Brightness blends with black: v·(1+m), truncated and clamped.
		{Brightness, 0.5, []byte{0, 1, 55, 150, 190, 192, 255, 255}},
		{Brightness, -0.5, []byte{0, 0, 18, 50, 63, 64, 100, 127}},
		// Contrast blends with the mean grey level round(848/8 = 106).
		{Contrast, -1, []byte{106, 106, 106, 106, 106, 106, 106, 106}},
		{Contrast, 1, []byte{0, 0, 0, 94, 148, 150, 255, 255}},
		// A grey image is its own degenerate for Color.
		{Color, 0.9, []byte{0, 1, 37, 100, 127, 128, 200, 255}},
		// AutoContrast stretches [0, 255] onto itself.
		{AutoContrast, 0, []byte{0, 1, 37, 100, 127, 128, 200, 255}},
	} {
		if got := apply(tc.op, src, tc.mag); !bytes.Equal(got.Pix, tc.want) {
			t.Errorf("%v(%v) = %v, want %v", tc.op, tc.mag, got.Pix, tc.want)
		}
	}
}

func TestAutoContrast(t *testing.T) {
	// Channel 0 spans 50..150 (scale 2.55), channel 1 is constant and is
	// left alone, channel 2 spans 0..3 (scale 85).
	src := Image{C: 3, H: 1, W: 4, Pix: []byte{
		50, 100, 150, 100,
		7, 7, 7, 7,
		0, 1, 2, 3,
	}}
	want := []byte{0, 127, 255, 127, 7, 7, 7, 7, 0, 85, 170, 255}
	if got := apply(AutoContrast, src, 0); !bytes.Equal(got.Pix, want) {
		t.Errorf("AutoContrast = %v, want %v", got.Pix, want)
	}
}

func TestEqualize(t *testing.T) {
	// 1024 pixels: 512 of 10, 256 of 20, 256 of 30. Pillow's step is
	// (1024 − 256)/256 = 3 and lut[i] = (1 + #pixels below i) / 3:
	// 10 → 0, 20 → 513/3 = 171, 30 → 769/3 = 256, clamped to 255.
	src := NewImage(1, 32, 32)
	for i := range src.Pix {
		src.Pix[i] = []byte{10, 10, 20, 30}[i%4]
	}
	got := apply(Equalize, src, 0)
	for i, v := range got.Pix {
		if want := []byte{0, 0, 171, 255}[i%4]; v != want {
			t.Fatalf("Equalize: pixel %d (was %d) = %d, want %d", i, src.Pix[i], v, want)
		}
	}
	// Too few pixels for a step of at least 1: unchanged.
	small := grid([]byte{1, 2, 3, 4})
	if got := apply(Equalize, small, 0); !bytes.Equal(got.Pix, small.Pix) {
		t.Errorf("Equalize of 4 pixels = %v, want it unchanged", got.Pix)
	}
}

func TestColor(t *testing.T) {
	// Pure red has Pillow grey level (255·19595 + 32768) >> 16 = 76.
	src := Image{C: 3, H: 1, W: 2, Pix: []byte{255, 90, 0, 90, 0, 90}}
	if got, want := apply(Color, src, -1).Pix, []byte{76, 90, 76, 90, 76, 90}; !bytes.Equal(got, want) {
		t.Errorf("Color(-1) = %v, want %v", got, want)
	}
	// Factor 1.5 pushes red away from grey 76: 76 + 1.5·179 = 344.5 → 255,
	// 76 − 1.5·76 = −38 → 0.
	if got, want := apply(Color, src, 0.5).Pix, []byte{255, 90, 0, 90, 0, 90}; !bytes.Equal(got, want) {
		t.Errorf("Color(0.5) = %v, want %v", got, want)
	}
}

func TestSharpness(t *testing.T) {
	src := grid(
		[]byte{0, 0, 0, 9},
		[]byte{0, 13, 0, 9},
		[]byte{0, 0, 0, 9},
	)
	// SMOOTH: centre (5·13)/13 = 5; (1,2) sees 13 + 3·9 + 5·0 = 40 → 40/13
	// rounds to 3; the border is kept.
	if got, want := apply(Sharpness, src, -1).Pix, []byte{0, 0, 0, 9, 0, 5, 3, 9, 0, 0, 0, 9}; !bytes.Equal(got, want) {
		t.Errorf("Sharpness(-1) = %v, want %v", got, want)
	}
	// Factor 2: 5 + 2·(13−5) = 21 and 3 + 2·(0−3) = −3 → 0.
	if got, want := apply(Sharpness, src, 1).Pix, []byte{0, 0, 0, 9, 0, 21, 0, 9, 0, 0, 0, 9}; !bytes.Equal(got, want) {
		t.Errorf("Sharpness(1) = %v, want %v", got, want)
	}
}

// TestGeometricOpsMovePixel follows one marked pixel; the expected places
// are worked out by hand from the inverse maps in the comments.
func TestGeometricOpsMovePixel(t *testing.T) {
	for _, tc := range []struct {
		op           Op
		mag          float64
		w, h         int
		x, y         int // marker before
		wantX, wantY int // and after; -1: gone
	}{
		// ShearX: input x = floor(x + ½ + m·(y + ½)); row 2: x + 1.25.
		{ShearX, 0.3, 5, 5, 3, 2, 2, 2},
		{ShearX, -0.3, 5, 5, 3, 2, 4, 2},
		// Row 0: x + 0.65 → x, so the top row does not move.
		{ShearX, 0.3, 5, 5, 3, 0, 3, 0},
		{ShearY, 0.3, 5, 5, 2, 3, 2, 2},
		{TranslateX, 2.9, 5, 5, 1, 1, 3, 1},
		{TranslateX, -1.5, 5, 5, 1, 1, 0, 1},
		{TranslateX, 4, 5, 5, 1, 1, -1, -1},
		{TranslateY, 14.5, Side, Side, 3, 10, 3, 24},
		// A quarter turn counter-clockwise: (x, y) → (y, W−1−x).
		{Rotate, 90, 4, 4, 3, 0, 0, 0},
		{Rotate, 90, 4, 4, 1, 2, 2, 2},
		{Rotate, -90, 4, 4, 3, 0, 3, 3},
		{Rotate, 180, 4, 4, 1, 0, 2, 3},
		// 30°: the pixel centre (26.5, 16.5), 10.5 right of the centre,
		// turns to (16 + 10.5·cos30 + 0.5·sin30, 16 − 10.5·sin30 + 0.5·cos30)
		// = (25.34, 11.18); −30°: (24.84, 21.68).
		{Rotate, 30, Side, Side, 26, 16, 25, 11},
		{Rotate, -30, Side, Side, 26, 16, 24, 21},
	} {
		name := fmt.Sprintf("%v(%v) of (%d,%d)", tc.op, tc.mag, tc.x, tc.y)
		got := apply(tc.op, marker(3, tc.h, tc.w, tc.x, tc.y, 200), tc.mag)
		var want Image
		if tc.wantX >= 0 {
			want = marker(3, tc.h, tc.w, tc.wantX, tc.wantY, 200)
		} else {
			want = NewImage(3, tc.h, tc.w)
		}
		if tc.op == Rotate && math.Abs(tc.mag) == 30 {
			// A rotation by 30° may copy the marker to a neighbour too;
			// only the predicted place is checked.
			if v := got.Pix[tc.wantY*tc.w+tc.wantX]; v != 200 {
				t.Errorf("%s: pixel (%d,%d) = %d, want 200", name, tc.wantX, tc.wantY, v)
			}
			continue
		}
		if !bytes.Equal(got.Pix, want.Pix) {
			t.Errorf("%s: got %v, want %v", name, got.Pix, want.Pix)
		}
	}
}

func TestRotateQuarterTurnsArePermutations(t *testing.T) {
	src := randomImage(3, Side, Side, 4)
	got := apply(Rotate, src, 90)
	for c := range 3 {
		for y := range Side {
			for x := range Side {
				if a, b := got.Pix[(c*Side+y)*Side+x], src.Pix[(c*Side+x)*Side+Side-1-y]; a != b {
					t.Fatalf("Rotate(90) at (%d,%d,%d) = %d, want %d", c, y, x, a, b)
				}
			}
		}
	}
	back := apply(Rotate, apply(Rotate, got, 90), 180)
	if !bytes.Equal(back.Pix, src.Pix) {
		t.Error("four quarter turns did not restore the image")
	}
}

func TestMagnitudeTable(t *testing.T) {
	lin := func(lo, hi float64, bin int) float64 { return lo + (hi-lo)*float64(bin)/9 }
	for _, tc := range []struct {
		op     Op
		bin    int
		want   float64
		signed bool
	}{
		{ShearX, 8, lin(0, 0.3, 8), true},
		{ShearY, 7, lin(0, 0.3, 7), true},
		{TranslateX, 9, 150.0 / 331 * 32, true},
		{TranslateY, 3, lin(0, 150.0/331*32, 3), true},
		{Rotate, 2, 20.0 / 3, true},
		{Brightness, 7, 0.7, true},
		{Color, 9, 0.9, true},
		{Contrast, 6, 0.6, true},
		{Sharpness, 1, 0.1, true},
		{Solarize, 0, 255, false},
		{Solarize, 2, lin(255, 0, 2), false},
		{Solarize, 9, 0, false},
		{AutoContrast, 0, 0, false},
	} {
		got, signed := Magnitude(tc.op, tc.bin, Side, Side)
		if math.Abs(got-tc.want) > 1e-5*max(1, tc.want) || signed != tc.signed {
			t.Errorf("Magnitude(%v, %d) = %v, %v; want %v, %v", tc.op, tc.bin, got, signed, tc.want, tc.signed)
		}
	}
	for bin, want := range []float64{8, 8, 7, 7, 6, 6, 5, 5, 4, 4} {
		if got, signed := Magnitude(Posterize, bin, Side, Side); got != want || signed {
			t.Errorf("Posterize bits at bin %d = %v (signed %v), want %v", bin, got, signed, want)
		}
	}
	// The translations torchvision applies are int(magnitude).
	for bin, want := range map[int]float64{3: 4, 8: 12, 9: 14} {
		if got, _ := Magnitude(TranslateX, bin, Side, Side); math.Trunc(got) != want {
			t.Errorf("TranslateX bin %d shifts by %v pixels, want %v", bin, math.Trunc(got), want)
		}
	}
}
