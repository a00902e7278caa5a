package report

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// curve is one mode's points of a sweep, in sweep order.
type curve struct {
	mode string
	pts  []Point
}

// curves groups pts by mode, in the order the points first name each.
func curves(pts []Point) []curve {
	var cs []curve
	at := map[string]int{}
	for _, pt := range pts {
		k, ok := at[pt.Mode]
		if !ok {
			k = len(cs)
			at[pt.Mode] = k
			cs = append(cs, curve{mode: pt.Mode})
		}
		cs[k].pts = append(cs[k].pts, pt)
	}
	return cs
}

// curveColor is the colour of the k-th mode's curve: its line, its points
// and its legend entry.
func curveColor(k int) color.Color { return plotutil.Color(k) }

// referenceColor is the colour of the reference points: a dark olive,
// which no curve, grid line or antialiased text is drawn in.
var referenceColor color.Color = color.RGBA{R: 0x50, G: 0x50, B: 0x20, A: 0xff}

// addCurve draws c as the k-th curve: a line through solid points, each
// labelled with its swept value, named in the legend by its mode.
func addCurve(p *plot.Plot, k int, c curve) error {
	xys := make(plotter.XYs, len(c.pts))
	labels := make([]string, len(c.pts))
	for j, pt := range c.pts {
		xys[j] = plotter.XY{X: pt.Result.RoundTripsSavedPct, Y: pt.Result.DecisionErrorPct}
		labels[j] = pt.Value // the parameter is in the title
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	line.Color = curveColor(k)
	points.Shape, points.Color, points.Radius = draw.CircleGlyph{}, curveColor(k), vg.Points(3)
	names, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return err
	}
	names.Offset = vg.Point{X: vg.Points(4), Y: vg.Points(3)}
	p.Add(line, points, names)
	p.Legend.Add(c.mode, line, points)
	return nil
}

// referenceShapes tell the reference points apart, in the order given
// (the first two solid).
var referenceShapes = []draw.GlyphDrawer{draw.BoxGlyph{}, draw.PyramidGlyph{}, draw.CrossGlyph{}, draw.PlusGlyph{}}

// addReference draws r, the k-th reference, as one point named by its mode.
func addReference(p *plot.Plot, k int, r engine.Result) error {
	s, err := plotter.NewScatter(plotter.XYs{{X: r.RoundTripsSavedPct, Y: r.DecisionErrorPct}})
	if err != nil {
		return err
	}
	s.Shape = referenceShapes[k%len(referenceShapes)]
	s.Color, s.Radius = referenceColor, vg.Points(4)
	p.Add(s)
	p.Legend.Add(r.Mode+" (reference)", s)
	return nil
}
