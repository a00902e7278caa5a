package report

import (
	"image/color"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/plotutil"
	"gonum.org/v1/plot/text"
	"gonum.org/v1/plot/vg"
	"gonum.org/v1/plot/vg/draw"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// curve is one mode's points of a sweep, in sweep order, and where a
// point goes on the plot (nil: the frontier's place, frontierXY).
type curve struct {
	mode string
	pts  []Point
	at   func(Point) plotter.XY
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

// xys places c's points: by c.at, or on the frontier.
func (c curve) xys() plotter.XYs {
	at := c.at
	if at == nil {
		at = frontierXY
	}
	xys := make(plotter.XYs, len(c.pts))
	for j, pt := range c.pts {
		xys[j] = at(pt)
	}
	return xys
}

// frontierXY places a point on the frontier: round trips saved % across,
// decision error % up.
func frontierXY(pt Point) plotter.XY {
	return plotter.XY{X: pt.Result.RoundTripsSavedPct, Y: pt.Result.DecisionErrorPct}
}

// addCurve draws c as the k-th curve, a line through solid points, named in
// the legend by its mode.
func addCurve(p *plot.Plot, k int, c curve) error {
	line, points, err := plotter.NewLinePoints(c.xys())
	if err != nil {
		return err
	}
	line.Color = curveColor(k)
	points.Shape, points.Color, points.Radius = draw.CircleGlyph{}, curveColor(k), vg.Points(3)
	p.Add(line, points)
	p.Legend.Add(c.mode, line, points)
	return nil
}

// addValueLabels labels each of c's points with its swept value (the
// parameter is in the title), on alternate sides so that neighbours'
// labels do not overlap: above and below along a curve that runs across
// the plot, right and left along one that runs up it. It reads the axes'
// final ranges, so it comes after every curve and reference is added.
func addValueLabels(p *plot.Plot, c curve) error {
	xys := c.xys()
	xmin, xmax, ymin, ymax := plotter.XYRange(xys)
	across := (xmax-xmin)/(p.X.Max-p.X.Min) >= (ymax-ymin)/(p.Y.Max-p.Y.Min)
	gap := vg.Points(5) // clears the point's glyph
	for side := range 2 {
		var l plotter.XYLabels
		for j := side; j < len(xys); j += 2 {
			l.XYs, l.Labels = append(l.XYs, xys[j]), append(l.Labels, c.pts[j].Value)
		}
		if len(l.XYs) == 0 {
			continue
		}
		names, err := plotter.NewLabels(l)
		if err != nil {
			return err
		}
		sign := vg.Length(1 - 2*side) // first side: above or right; second: below or left
		for i := range names.TextStyle {
			ts := &names.TextStyle[i]
			if across {
				ts.XAlign, ts.YAlign = text.XCenter, text.YAlignment(-float64(side)) // bottom above, top below
				names.Offset = vg.Point{Y: sign * gap}
			} else {
				ts.XAlign, ts.YAlign = text.XAlignment(-float64(side)), text.YCenter // left edge right, right edge left
				names.Offset = vg.Point{X: sign * gap}
			}
		}
		p.Add(names)
	}
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
