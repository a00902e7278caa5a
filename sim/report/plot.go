package report

import (
	"fmt"

	"gonum.org/v1/plot"
	"gonum.org/v1/plot/plotter"
	"gonum.org/v1/plot/vg"
)

// WritePlot draws the sweep's trade-off curve, decision error % against
// round trips saved %, one point per value labelled with it, into a PNG
// at path.
func WritePlot(path, title string, pts []Point) error {
	if len(pts) == 0 {
		return fmt.Errorf("plot: no sweep points")
	}
	p := plot.New()
	p.Title.Text = title
	p.X.Label.Text = "Redis round trips saved (%)"
	p.Y.Label.Text = "decision error (%)"
	xys := make(plotter.XYs, len(pts))
	labels := make([]string, len(pts))
	for k, pt := range pts {
		xys[k] = plotter.XY{X: pt.Result.RoundTripsSavedPct, Y: pt.Result.DecisionErrorPct}
		labels[k] = pt.Value // the parameter is in the title
	}
	line, points, err := plotter.NewLinePoints(xys)
	if err != nil {
		return err
	}
	names, err := plotter.NewLabels(plotter.XYLabels{XYs: xys, Labels: labels})
	if err != nil {
		return err
	}
	p.Add(line, points, names, plotter.NewGrid())
	return p.Save(7*vg.Inch, 5*vg.Inch, path)
}
