package folder

import (
	"bytes"
	"encoding/binary"
	"errors"
	"hash/crc32"
	"image"
	"image/color"
	"image/jpeg"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"testing"

	"github.com/psclip/psclip/data/cifar"
)

// pattern is a test image's grey level or colour at (x, y).
type pattern func(x, y int) color.Color

// writeImage writes a w×h image of p to path, PNG or JPEG by extension;
// grey when p gives color.Gray.
func writeImage(t *testing.T, path string, w, h int, p pattern) {
	t.Helper()
	var img interface {
		image.Image
		Set(x, y int, c color.Color)
	}
	if _, grey := p(0, 0).(color.Gray); grey {
		img = image.NewGray(image.Rect(0, 0, w, h))
	} else {
		img = image.NewRGBA(image.Rect(0, 0, w, h))
	}
	for y := range h {
		for x := range w {
			img.Set(x, y, p(x, y))
		}
	}
	var buf bytes.Buffer
	var err error
	if filepath.Ext(path) == ".png" {
		err = png.Encode(&buf, img)
	} else {
		err = jpeg.Encode(&buf, img, &jpeg.Options{Quality: 100})
	}
	if err != nil {
		t.Fatal(err)
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(path, buf.Bytes(), 0o644); err != nil {
		t.Fatal(err)
	}
}

// grey is a smooth grey pattern with a different level at every pixel.
func grey(seed int) pattern {
	return func(x, y int) color.Color { return color.Gray{uint8((x*7 + y*13 + seed*31) % 256)} }
}

// areaReference resizes and crops a w×h grey image given by p as Load
// promises, computed independently of fit: each output pixel the integral
// of the piecewise-constant input over its box, by the midpoint rule on a
// grid of 1/sub of an input pixel (exact where the box edges fall on the
// grid, as they do for the sizes tested).
func areaReference(w, h int, p pattern, sub int) []byte {
	s := float64(cifar.Side) / float64(min(w, h))
	ow, oh := int(math.Round(float64(w)*s)), int(math.Round(float64(h)*s))
	left, top := (ow-cifar.Side)/2, (oh-cifar.Side)/2
	out := make([]byte, cifar.Side*cifar.Side)
	level := func(x, y int) float64 { return float64(p(x, y).(color.Gray).Y) }
	for oy := range cifar.Side {
		for ox := range cifar.Side {
			x0, x1 := float64(left+ox)/s, float64(left+ox+1)/s
			y0, y1 := float64(top+oy)/s, float64(top+oy+1)/s
			var sum, area float64
			for fy := y0 + 0.5/float64(sub); fy < y1; fy += 1 / float64(sub) {
				for fx := x0 + 0.5/float64(sub); fx < x1; fx += 1 / float64(sub) {
					sum += level(int(fx), int(fy))
					area++
				}
			}
			out[oy*cifar.Side+ox] = byte(math.Round(sum / area))
		}
	}
	return out
}

func TestLoadResizes(t *testing.T) {
	for _, tc := range []struct {
		name string
		w, h int
	}{
		{"same size", 32, 32},
		{"halved", 64, 64},
		{"wide, cropped", 80, 40}, // 64×32, then columns 16…47
		{"tall, cropped", 40, 60}, // 32×48, then rows 8…39
		{"enlarged", 16, 16},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			for c, class := range []string{"a", "b"} {
				writeImage(t, filepath.Join(dir, "train", class, "0.png"), tc.w, tc.h, grey(c))
				writeImage(t, filepath.Join(dir, "test", class, "0.png"), tc.w, tc.h, grey(c+2))
			}
			train, test, err := Load(dir)
			if err != nil {
				t.Fatal(err)
			}
			if !train.Grey || !test.Grey || train.Classes != 2 || test.Classes != 2 {
				t.Fatalf("grey %v %v, classes %d %d; want grey sets of 2 classes", train.Grey, test.Grey, train.Classes, test.Classes)
			}
			for i, seed := range []int{0, 1} {
				want := areaReference(tc.w, tc.h, grey(seed), 20)
				got := train.Image(i)
				for j := range want {
					if d := int(got[j]) - int(want[j]); d < -1 || d > 1 { // rounding of a sum near .5
						t.Fatalf("image %d pixel %d: %d, want %d", i, j, got[j], want[j])
					}
				}
				if train.Labels[i] != uint8(i) {
					t.Errorf("label %d, want %d", train.Labels[i], i)
				}
			}
		})
	}
}

// TestLoadBlocks checks exact values where the area average has no
// rounding: a 64×64 image of constant 2×2 blocks halves to the blocks.
func TestLoadBlocks(t *testing.T) {
	dir := t.TempDir()
	block := func(x, y int) color.Color { return color.Gray{uint8(x/2*5 + y/2*3)} }
	for _, class := range []string{"x", "y"} {
		writeImage(t, filepath.Join(dir, "train", class, "0.png"), 64, 64, block)
		writeImage(t, filepath.Join(dir, "test", class, "0.png"), 64, 64, block)
	}
	train, _, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	img := train.Image(0)
	for y := range cifar.Side {
		for x := range cifar.Side {
			if want := uint8(x*5 + y*3); img[y*cifar.Side+x] != want {
				t.Fatalf("(%d, %d): %d, want %d", x, y, img[y*cifar.Side+x], want)
			}
		}
	}
}

func TestLoadColourAndFlatLayout(t *testing.T) {
	dir := t.TempDir()
	red := func(x, y int) color.Color { return color.RGBA{200, 10, 50, 255} }
	// Class "cat": 12 colour PNGs; class "dog": 11 grey JPEGs.
	for i := range 12 {
		writeImage(t, filepath.Join(dir, "cat", string(rune('a'+i))+".png"), 32, 32, red)
	}
	for i := range 11 {
		writeImage(t, filepath.Join(dir, "dog", string(rune('a'+i))+".jpg"), 32, 32, func(x, y int) color.Color { return color.Gray{77} })
	}
	if err := os.WriteFile(filepath.Join(dir, "dog", "notes.txt"), []byte("ignored"), 0o644); err != nil {
		t.Fatal(err)
	}
	train, test, err := Load(dir)
	if err != nil {
		t.Fatal(err)
	}
	// Every tenth file of each class is a test image: 1 of 12, 1 of 11.
	if train.Len() != 21 || test.Len() != 2 || train.Grey || test.Grey {
		t.Fatalf("train %d, test %d, grey %v %v; want 21 and 2 RGB images", train.Len(), test.Len(), train.Grey, test.Grey)
	}
	if got := train.Image(0); got[0] != 200 || got[1024] != 10 || got[2048] != 50 {
		t.Errorf("a red pixel reads %d, %d, %d", got[0], got[1024], got[2048])
	}
	// A grey JPEG's level, in all three planes (JPEG at quality 100 may
	// move it by one).
	got := train.Image(20)
	for c := range 3 {
		if v := got[c*1024+5]; v < 76 || v > 78 {
			t.Errorf("grey JPEG, plane %d: %d, want 77", c, v)
		}
	}
	if train.Labels[20] != 1 || test.Labels[0] != 0 || test.Labels[1] != 1 {
		t.Errorf("labels %v / %v", train.Labels, test.Labels)
	}
}

// hugePNG is a valid PNG header (signature, IHDR with its CRC) claiming
// w×h pixels, with no pixel data.
func hugePNG(w, h uint32) []byte {
	var b bytes.Buffer
	b.WriteString("\x89PNG\r\n\x1a\n")
	ihdr := make([]byte, 17)
	copy(ihdr, "IHDR")
	binary.BigEndian.PutUint32(ihdr[4:], w)
	binary.BigEndian.PutUint32(ihdr[8:], h)
	ihdr[12], ihdr[13] = 8, 0 // 8-bit grey
	binary.Write(&b, binary.BigEndian, uint32(13))
	b.Write(ihdr)
	binary.Write(&b, binary.BigEndian, crc32.ChecksumIEEE(ihdr))
	return b.Bytes()
}

func TestLoadRefuses(t *testing.T) {
	img := func(dir, rel string) { writeImage(t, filepath.Join(dir, rel), 8, 8, grey(0)) }
	file := func(dir, rel string, b []byte) {
		if err := os.MkdirAll(filepath.Dir(filepath.Join(dir, rel)), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, rel), b, 0o644); err != nil {
			t.Fatal(err)
		}
	}
	for _, tc := range []struct {
		name  string
		make  func(dir string)
		fault string // the path the error names, relative to dir
	}{
		{"one class", func(d string) { img(d, "train/a/0.png"); img(d, "test/a/0.png") }, "train"},
		{"empty class", func(d string) {
			img(d, "train/a/0.png")
			img(d, "test/a/0.png")
			os.MkdirAll(filepath.Join(d, "train/b"), 0o755)
		}, "train/b"},
		{"no test image", func(d string) { img(d, "a/0.png"); img(d, "b/0.png") }, ""},
		{"a test class the training set lacks", func(d string) {
			img(d, "train/a/0.png")
			img(d, "train/b/0.png")
			img(d, "test/c/0.png")
		}, "test/c"},
		{"not an image", func(d string) {
			img(d, "train/a/0.png")
			img(d, "test/a/0.png")
			file(d, "train/b/0.png", []byte("not a png"))
		}, "train/b/0.png"},
		{"truncated", func(d string) {
			img(d, "train/a/0.png")
			img(d, "test/a/0.png")
			file(d, "train/b/0.png", hugePNG(8, 8))
		}, "train/b/0.png"},
		{"absurd size", func(d string) {
			img(d, "train/a/0.png")
			img(d, "test/a/0.png")
			file(d, "train/b/0.png", hugePNG(1<<20, 1<<20))
		}, "train/b/0.png"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			dir := t.TempDir()
			tc.make(dir)
			_, _, err := Load(dir)
			var fe *Error
			if !errors.As(err, &fe) || fe.Path != filepath.Join(dir, tc.fault) {
				t.Fatalf("error %v, want a *folder.Error naming %s", err, tc.fault)
			}
		})
	}
	var nf *NotFoundError
	if _, _, err := Load(t.TempDir()); !errors.As(err, &nf) {
		t.Errorf("an empty directory: %v, want *NotFoundError", err)
	}
}
