package report

import (
	"fmt"
	"time"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WriteSpanPlot draws a crowd-span sweep into a PNG at path: each mode's
// worst over-admission (its worst identity's most units in one window ÷
// the limit) against the span over which a flash crowd's burst arrives,
// on a logarithmic axis, one curve per mode in the order the points first
// name it (the axis names the spans), and the limit itself (1×)
// as a dashed line. Every point's Value must be a positive duration.
func WriteSpanPlot(path, title string, pts []Point) error {
	if len(pts) == 0 {
		return fmt.Errorf("plot: no sweep points")
	}
	at := func(pt Point) plotter.XY {
		d, _ := time.ParseDuration(pt.Value)
		return plotter.XY{X: d.Seconds(), Y: pt.Result.MaxOveradmission}
	}
	for _, pt := range pts {
		if d, err := time.ParseDuration(pt.Value); err != nil || d <= 0 {
			return fmt.Errorf("plot: span %q is not a positive duration", pt.Value)
		}
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "span over which each crowd identity's burst arrives (s, log scale)"
	p.Y.Label.Text = "worst over-admission (× the limit)"
	p.X.Scale, p.X.Tick.Marker = plot.LogScale{}, plot.LogTicks{Prec: -1}
	p.Legend.Top = true
	p.Add(plotter.NewGrid())
	cs := curves(pts)
	lo, hi := at(pts[0]).X, at(pts[0]).X
	for k := range cs {
		cs[k].at = at
		for _, xy := range cs[k].xys() {
			lo, hi = min(lo, xy.X), max(hi, xy.X)
		}
		if err := addCurve(p, k, cs[k]); err != nil {
			return err
		}
	}
	limit, err := plotter.NewLine(plotter.XYs{{X: lo, Y: 1}, {X: hi, Y: 1}})
	if err != nil {
		return err
	}
	limit.Color, limit.Width, limit.Dashes = referenceColor, vg.Points(2), []vg.Length{vg.Points(6), vg.Points(4)}
	p.Add(limit)
	p.Legend.Add("the limit (1×)", limit)
	p.X.Min, p.X.Max = lo/1.5, hi*1.5
	p.Y.Min = min(p.Y.Min, 0.9)
	p.Y.Max += 0.06 * (p.Y.Max - p.Y.Min)
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}
