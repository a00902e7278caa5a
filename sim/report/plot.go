package report

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"

	"github.com/edgelimit/edgelimit/sim/engine"
)

// WritePlot draws the sweep's frontier, decision error % against round
// trips saved %, into a PNG at path: one curve per mode, in the order the
// points first name it, each point labelled with its swept value, and each
// of refs (modes run once, such as pure Redis and local) as a reference
// point (not the reference's row, whose round trips saved do not apply:
// engine.Result.SavesRoundTrips); a legend names curves and references.
func WritePlot(path, title string, pts []Point, refs []engine.Result) error {
	if len(pts) == 0 {
		return fmt.Errorf("plot: no sweep points")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "Redis round trips saved (%)"
	p.Y.Label.Text = "decision error (%)"
	p.Legend.Top, p.Legend.Left = true, true
	p.Legend.XOffs = vg.Points(6)
	p.Add(plotter.NewGrid())
	cs := curves(pts)
	for k, c := range cs {
		if err := addCurve(p, k, c); err != nil {
			return err
		}
	}
	k := 0
	for _, r := range refs {
		if !r.SavesRoundTrips() {
			continue
		}
		if err := addReference(p, k, r); err != nil {
			return err
		}
		k++
	}
	frame(p)
	for _, c := range cs {
		if err := addValueLabels(p, c); err != nil {
			return err
		}
	}
	return p.Save(9*vg.Inch, 6*vg.Inch, path)
}

// frame shows every saving from 0 to 100% with room on the right for the
// labels of points near 100%, and room above the highest point's label.
func frame(p *plot.Plot) {
	p.X.Min, p.X.Max = min(p.X.Min, 0), max(p.X.Max, 100)+8
	p.Y.Max += 0.06 * (p.Y.Max - p.Y.Min)
}
