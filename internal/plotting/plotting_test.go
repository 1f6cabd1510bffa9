package plotting

import (
	"bytes"
	"encoding/xml"
	"image/png"
	"math"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

func panels() []Panel {
	x := []float64{1, 2, 3, 4, 5}
	return []Panel{
		{Title: "log", XLabel: "t", YLabel: "|x|", LogY: true, Series: []Series{
			{Name: "a", X: x, Y: []float64{1, 0.5, 0.25, 0, 0.1}}, // 0 left out on a log axis
			{Name: "b", X: x, Y: []float64{2, math.NaN(), 1, 1, math.Inf(1)}},
		}},
		{Title: "linear", XLabel: "t", Series: []Series{{Name: "c", X: x, Y: []float64{-1, 0, 1, 0, -1}}}},
		{Title: "empty log panel", LogY: true},
	}
}

func TestSavePNG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fig.png")
	if err := Save(path, panels()); err != nil {
		t.Fatal(err)
	}
	f, err := os.Open(path)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	img, err := png.Decode(f)
	if err != nil {
		t.Fatalf("not a PNG: %v", err)
	}
	b := img.Bounds()
	// 3 panels of 4×3.2 inches at 150 dpi.
	if b.Dx() != 3*4*150 || b.Dy() != 3.2*150 {
		t.Errorf("image is %d×%d, want %d×%d", b.Dx(), b.Dy(), 3*4*150, 480)
	}
	// Not blank: some pixel differs from the top-left one.
	bg := img.At(0, 0)
	blank := true
	for y := b.Min.Y; y < b.Max.Y && blank; y += 7 {
		for x := b.Min.X; x < b.Max.X; x += 7 {
			if img.At(x, y) != bg {
				blank = false
				break
			}
		}
	}
	if blank {
		t.Error("the figure is blank")
	}
}

func TestSaveSVG(t *testing.T) {
	path := filepath.Join(t.TempDir(), "fig.SVG")
	if err := Save(path, panels()); err != nil {
		t.Fatal(err)
	}
	data, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	d := xml.NewDecoder(bytes.NewReader(data))
	var root string
	for {
		tok, err := d.Token()
		if err != nil {
			if root == "" {
				t.Fatalf("not XML: %v", err)
			}
			break
		}
		if se, ok := tok.(xml.StartElement); ok && root == "" {
			root = se.Name.Local
		}
	}
	if root != "svg" {
		t.Errorf("root element %q, want svg", root)
	}
	for _, want := range []string{"log", "linear", "empty log panel"} {
		if !bytes.Contains(data, []byte(want)) {
			t.Errorf("SVG lacks the title %q", want)
		}
	}
}

func TestSaveErrors(t *testing.T) {
	dir := t.TempDir()
	tests := []struct {
		name, file string
		panels     []Panel
		want       string
	}{
		{"unknown extension", "fig.jpg", panels(), "unknown figure format"},
		{"no extension", "fig", panels(), "unknown figure format"},
		{"no panels", "fig.png", nil, "no panels"},
		{"length mismatch", "fig.svg", []Panel{{Series: []Series{{Name: "s", X: []float64{1, 2}, Y: []float64{1}}}}}, "2 x values and 1 y values"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			path := filepath.Join(dir, tt.file)
			err := Save(path, tt.panels)
			if err == nil || !strings.Contains(err.Error(), tt.want) {
				t.Fatalf("Save = %v, want an error containing %q", err, tt.want)
			}
			if _, err := os.Stat(path); !os.IsNotExist(err) {
				t.Errorf("%s exists after a failed Save", path)
			}
		})
	}
	entries, _ := os.ReadDir(dir)
	if len(entries) != 0 {
		t.Errorf("failed saves left files behind: %v", entries)
	}
}
