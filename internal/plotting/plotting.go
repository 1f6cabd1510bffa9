// Package plotting draws line-plot figures for psclip's experiments with
// gonum.org/v1/plot: one or more panels side by side, each with its own axes,
// title and legend, written as PNG or SVG.
//
// Every experiment builds []Panel from its results and calls Save:
//
//	err := plotting.Save("out/quadratic.png", []plotting.Panel{{
//		Title: "p = 1.8", XLabel: "iteration", YLabel: "|∇F(x_t)|", LogY: true,
//		Series: []plotting.Series{{Name: "nsgd", X: t, Y: norms}},
//	}})
//
// Series in a panel get distinct colours and dash patterns, the same for the
// same index in every panel, so a method looks alike across panels when the
// series are given in the same order.
package plotting

import (
	"fmt"
	"io"
	"math"
	"os"
	"path/filepath"
	"strings"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"
	"gonum.org/v1/plot/vg/vgimg"
	"gonum.org/v1/plot/vg/vgsvg"

	"github.com/psclip/psclip/internal/atomicfile"
)

// Series is one curve: the points (X[i], Y[i]). Points with a non-finite
// coordinate, or Y ≤ 0 on a log axis, are left out.
type Series struct {
	Name string // legend entry; an empty name gets none
	X, Y []float64
}

// Panel is one plot of a figure.
type Panel struct {
	Title, XLabel, YLabel string
	LogY                  bool // logarithmic y axis
	Series                []Series
}

// Panel size in a saved figure; a figure is len(panels) panels wide.
const (
	PanelWidth  = 4 * vg.Inch
	PanelHeight = 3.2 * vg.Inch
)

// Save draws panels side by side, left to right, and atomically writes the
// figure to path as PNG or SVG according to its extension (.png, .svg). An
// unknown extension, no panels, or a series whose X and Y differ in length is
// an error, and path is left untouched.
func Save(path string, panels []Panel) error {
	ext := strings.ToLower(filepath.Ext(path))
	if ext != ".png" && ext != ".svg" {
		return fmt.Errorf("plotting: %s: unknown figure format %q (want .png or .svg)", path, ext)
	}
	if len(panels) == 0 {
		return fmt.Errorf("plotting: %s: no panels to draw", path)
	}
	plots := make([]*plot.Plot, len(panels))
	for i, pn := range panels {
		p, err := newPlot(pn)
		if err != nil {
			return fmt.Errorf("plotting: %s: panel %d (%q): %w", path, i+1, pn.Title, err)
		}
		plots[i] = p
	}
	w, h := PanelWidth*vg.Length(len(panels)), PanelHeight
	var c interface {
		vg.CanvasSizer
		io.WriterTo
	}
	if ext == ".png" {
		c = vgimg.PngCanvas{Canvas: vgimg.NewWith(vgimg.UseWH(w, h), vgimg.UseDPI(150))}
	} else {
		c = vgsvg.New(w, h)
	}
	dc := draw.New(c)
	tiles := draw.Tiles{Rows: 1, Cols: len(panels), PadX: vg.Millimeter * 4,
		PadTop: vg.Millimeter * 2, PadBottom: vg.Millimeter * 2, PadLeft: vg.Millimeter * 2, PadRight: vg.Millimeter * 4}
	canvases := plot.Align([][]*plot.Plot{plots}, tiles, dc)
	for i, p := range plots {
		p.Draw(canvases[0][i])
	}
	return atomicfile.Write(path, func(f *os.File) error {
		_, err := c.WriteTo(f)
		return err
	})
}

func newPlot(pn Panel) (*plot.Plot, error) {
	p := plot.New()
	p.Title.Text = pn.Title
	p.X.Label.Text = pn.XLabel
	p.Y.Label.Text = pn.YLabel
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	drawn, named := 0, 0
	for i, s := range pn.Series {
		if len(s.X) != len(s.Y) {
			return nil, fmt.Errorf("series %q has %d x values and %d y values", s.Name, len(s.X), len(s.Y))
		}
		pts := make(plotter.XYs, 0, len(s.X))
		for j, x := range s.X {
			y := s.Y[j]
			if finite(x) && finite(y) && (!pn.LogY || y > 0) {
				pts = append(pts, plotter.XY{X: x, Y: y})
			}
		}
		if len(pts) == 0 {
			continue
		}
		l, err := plotter.NewLine(pts)
		if err != nil {
			return nil, err
		}
		l.Color = plotutil.DarkColors[i%len(plotutil.DarkColors)]
		l.Dashes = plotutil.Dashes(i)
		l.Width = vg.Points(1.5)
		p.Add(l)
		if s.Name != "" {
			p.Legend.Add(s.Name, l)
			named++
		}
		drawn++
	}
	if drawn == 0 {
		return p, nil
	}
	// Headroom above the data for the legend in the top right corner: each
	// legend entry takes about 7% of the panel's height.
	room := 0.07 * float64(named)
	lo, hi := p.Y.Min, p.Y.Max
	if pn.LogY {
		// A log axis needs positive data to set its range.
		p.Y.Scale = plot.LogScale{}
		p.Y.Tick.Marker = plot.LogTicks{Prec: -1}
		if hi > lo {
			p.Y.Max = hi * math.Pow(hi/lo, room/(1-room))
		}
	} else if hi > lo {
		p.Y.Max = hi + (hi-lo)*room/(1-room)
	}
	return p, nil
}

func finite(x float64) bool { return !math.IsNaN(x) && !math.IsInf(x, 0) }
